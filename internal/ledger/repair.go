package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// repair fixes the torn tail Open found: evidence copy (fsynced, directory fsynced), truncate
// to the last valid record, fsync, recovery record (fsynced). A crash in between leaves either
// the same torn tail (repaired again, with a second evidence copy) or a valid ledger without the
// recovery record. Any error faults nothing durable: Open fails and the file is verified anew on
// the next Open. It returns the recovery record.
func (l *Ledger) repair(rep *Report) (Record, error) {
	t := rep.Torn
	evidence, err := l.copyEvidence()
	if err != nil {
		return Record{}, fmt.Errorf("ledger: repair torn tail: evidence copy: %w", err)
	}
	if err := l.f.Truncate(t.Offset); err != nil {
		return Record{}, fmt.Errorf("ledger: repair torn tail: truncate %s to %d: %w", l.path, t.Offset, err)
	}
	if err := l.f.Sync(); err != nil {
		return Record{}, fmt.Errorf("ledger: repair torn tail: fsync %s: %w", l.path, err)
	}
	l.dirty, l.unsynced = false, 0
	l.synced, l.syncedH = l.c.seq, l.c.prev
	t.Evidence = evidence
	rec, err := l.appendOne(KindRecovery, l.opts.newID(), "", Recovery{
		TruncatedBytes: t.Bytes, DiscardedSHA256: t.SHA256, Evidence: evidence,
	})
	if err != nil {
		return Record{}, fmt.Errorf("ledger: repair torn tail: %w", err)
	}
	rep.HeadSeq, rep.HeadHash, rep.Size = rec.Seq, rec.H, l.size
	rep.Warnings = append(rep.Warnings, fmt.Sprintf(
		"W_LEDGER_TORN_TAIL_REPAIRED: %s: discarded %d bytes after seq %d (sha256 %s); the file before repair is kept as %s",
		l.path, t.Bytes, rec.Seq-1, t.SHA256, evidence))
	return rec, nil
}

// copyEvidence copies the whole ledger file to ledger.jsonl.torn-<seq> (or .torn-<seq>.<n> if
// that exists), fsyncs it and the directory, and returns the copy's file name.
func (l *Ledger) copyEvidence() (string, error) {
	src, err := l.fsys.OpenFile(l.path, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer src.Close()
	base := TornPrefix + strconv.FormatInt(l.c.seq, 10)
	name := base
	var dst File
	for n := 2; ; n++ {
		dst, err = l.fsys.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 1000 {
			return "", err
		}
		name = base + "." + strconv.Itoa(n)
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.fsys.SyncDir(l.dir)
	}
	return name, err
}

// SalvageInfo is the body of the salvage record that follows a salvaged prefix.
type SalvageInfo struct {
	Source          string `json:"source"`          // the damaged ledger file
	DiscardedBytes  int64  `json:"discardedBytes"`  // bytes after the valid prefix
	DiscardedSHA256 string `json:"discardedSha256"` // their digest
	Reason          string `json:"reason"`          // why the prefix ended there
}

// Salvage copies the valid prefix of the ledger in dir (every record up to the first bad line)
// byte for byte into a new ledger in newDir and appends a salvage record. The source is only
// read; the copy keeps the source's header, so the caller decides what to do with the source.
// It is the explicit, operator-invoked answer to corruption; Open never salvages.
func Salvage(dir, newDir string, opts Options) (*Report, error) {
	fsys := opts.fs()
	srcPath := filepath.Join(dir, FileName)
	c := newChain()
	res, scanErr := readVerified(fsys, srcPath, c, nil)
	var ce *CorruptError
	reason := "intact"
	switch {
	case scanErr == nil && res.torn != nil:
		reason = "torn tail"
	case errors.As(scanErr, &ce):
		reason = ce.Reason
	case scanErr != nil:
		return nil, scanErr
	}
	if c.seq == 0 {
		return nil, fmt.Errorf("ledger %s: nothing to salvage: %w", srcPath, ErrIncomplete)
	}
	src, err := fsys.OpenFile(srcPath, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer src.Close()

	if err := ensureDir(fsys, newDir); err != nil {
		return nil, fmt.Errorf("ledger: salvage into %s: %w", newDir, err)
	}
	lock, err := fsys.Lock(filepath.Join(newDir, LockName))
	if err != nil {
		return nil, err
	}
	l := &Ledger{dir: newDir, path: filepath.Join(newDir, FileName), fsys: fsys, opts: opts, lock: lock, c: c,
		header: c.header, size: res.end}
	defer l.Close()
	f, err := fsys.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ledger: salvage: %w", err)
	}
	l.f = f
	if n, err := io.CopyN(f, src, res.end); err != nil {
		return nil, fmt.Errorf("ledger: salvage: copied %d of %d bytes: %w", n, res.end, err)
	}
	d := sha256.New()
	discarded, err := io.Copy(d, src)
	if err != nil {
		return nil, fmt.Errorf("ledger: salvage: read %s: %w", srcPath, err)
	}
	l.dirty = true
	// The copied prefix is made durable on its own, so the salvage record is a version 1 line.
	if err := l.syncLocked(); err != nil {
		return nil, fmt.Errorf("ledger: salvage: %w", err)
	}
	rec, err := l.appendOne(KindSalvage, l.opts.newID(), "", SalvageInfo{
		Source: srcPath, DiscardedBytes: discarded, DiscardedSHA256: hex.EncodeToString(d.Sum(nil)), Reason: reason,
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: salvage: %w", err)
	}
	if err := fsys.SyncDir(newDir); err != nil {
		return nil, fmt.Errorf("ledger: salvage: %w", err)
	}
	return &Report{Header: c.header, HeadSeq: rec.Seq, HeadHash: rec.H, Size: l.size,
		Warnings: []string{fmt.Sprintf("W_LEDGER_SALVAGED: copied seq 1..%d of %s; discarded %d bytes (%s)", rec.Seq-1, srcPath, discarded, reason)}}, nil
}
