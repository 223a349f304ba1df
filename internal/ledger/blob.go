package ledger

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// blobPath is dir/blobs/sha256/<aa>/<digest>.
func blobPath(dir, digest string) string {
	return filepath.Join(dir, BlobDir, "sha256", digest[:2], digest)
}

// PutBlob stores data in the ledger's content-addressed blob store and returns its digest (64
// lowercase hex characters of sha256). It returns only when the blob is durable: temp file,
// fsync, rename into blobs/sha256/<aa>/<digest>, fsync of the directory. Append the record that
// names the digest after it returns. A blob already present is not written again. Blob errors
// are returned without faulting the ledger (no record names the blob yet).
func (l *Ledger) PutBlob(data []byte) (string, error) {
	l.mu.Lock()
	err := l.writable()
	l.mu.Unlock()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	final := blobPath(l.dir, digest)
	dir := filepath.Dir(final)
	if err := ensureDir(l.fsys, dir); err != nil {
		return "", fmt.Errorf("ledger: blob directory: %w", err)
	}
	switch f, err := l.fsys.OpenFile(final, os.O_RDONLY, 0); {
	case err == nil:
		f.Close()
		return digest, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("ledger: blob %s: %w", digest, err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := l.fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("ledger: blob: %w", err)
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.fsys.Rename(tmp, final)
	}
	if err != nil {
		_ = l.fsys.Remove(tmp)
		return "", fmt.Errorf("ledger: blob %s: %w", digest, err)
	}
	if err := l.fsys.SyncDir(dir); err != nil {
		return "", fmt.Errorf("ledger: blob %s: %w", digest, err)
	}
	return digest, nil
}

// Blob reads the blob with digest and verifies its content (ErrBlobDigest on a mismatch).
// It works on read-only ledgers too.
func (l *Ledger) Blob(digest string) ([]byte, error) {
	return readBlob(l.fsys, l.dir, digest)
}

// ReadBlob is [Ledger.Blob] for the ledger in dir without opening it: for an [Options].Visit
// that needs blobs before Open returns the Ledger. It takes no lock.
func ReadBlob(dir, digest string, opts Options) ([]byte, error) {
	return readBlob(opts.fs(), dir, digest)
}

func readBlob(fsys FS, dir, digest string) ([]byte, error) {
	if !validHex(digest) {
		return nil, fmt.Errorf("ledger: %q is not a sha256 digest (64 lowercase hex)", digest)
	}
	f, err := fsys.OpenFile(blobPath(dir, digest), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("ledger: blob: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("ledger: blob %s: %w", digest, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
		return nil, fmt.Errorf("ledger: blob %s has sha256 %x: %w", digest, sum, ErrBlobDigest)
	}
	return data, nil
}
