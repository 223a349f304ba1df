package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/atomicfile"
)

// Store is a content-addressed blob store in a directory: the blob with digest
// "sha256:<hex>" lives in <dir>/sha256/<hex[:2]>/<hex>. It addresses exact bytes, so storing an
// artifact file under its bytes gives the reference's fileDigest. A Store is safe for
// concurrent use by goroutines and processes: every write is a fresh temporary file renamed
// into place.
type Store struct {
	dir string
}

// OpenStore returns the store in dir, creating dir (and its parents) when missing.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Path returns where the blob with digest d lives (whether or not it is there).
func (s *Store) Path(d Digest) (string, error) {
	h := d.Hex()
	if h == "" {
		return "", fmt.Errorf("artifact store: %w: %q", ErrInvalidDigest, string(d))
	}
	return filepath.Join(s.dir, "sha256", h[:2], h), nil
}

// Put stores data and returns its digest. It returns only when the blob is durable: the bytes
// are written to a temporary file in the blob's directory, fsynced, renamed into place, and the
// directory is fsynced (as is each directory Put creates, through its parent). A blob already
// present with the right content is not written again; one present with wrong content is
// replaced.
func (s *Store) Put(data []byte) (Digest, error) {
	d := Sum(data)
	final, _ := s.Path(d)
	dir := filepath.Dir(final)
	if err := s.ensureDirs(dir); err != nil {
		return "", fmt.Errorf("artifact store: %w", err)
	}
	switch _, err := s.Get(d); {
	case err == nil:
		return d, nil
	case !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt):
		return "", err
	}
	if err := atomicfile.Write(final, data, 0o644); err != nil {
		return "", fmt.Errorf("artifact store: put %s: %w", d, err)
	}
	return d, nil
}

// Get reads the blob with digest d and verifies it: a missing blob is ErrNotFound (also
// matching fs.ErrNotExist), content that does not hash to d is a *CorruptError.
func (s *Store) Get(d Digest) ([]byte, error) {
	p, err := s.Path(d)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("artifact store: %w: %s: %w", ErrNotFound, d, err)
		}
		return nil, fmt.Errorf("artifact store: get %s: %w", d, err)
	}
	if got := Sum(data); got != d {
		return nil, &CorruptError{Path: p, Want: d, Got: got}
	}
	return data, nil
}

// ensureDirs creates <dir>/sha256 and the blob directory below it when missing, fsyncing the
// parent of each directory it creates.
func (s *Store) ensureDirs(blobDir string) error {
	top := filepath.Join(s.dir, "sha256")
	for _, d := range []string{top, blobDir} {
		err := os.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := atomicfile.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}
