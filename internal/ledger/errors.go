package ledger

import (
	"errors"
	"fmt"
)

// Sentinel conditions. Match them with errors.Is; the typed errors below carry the details.
var (
	// ErrLocked: another process (or another Ledger in this process) holds the writer lock.
	// The error is a *LockedError naming the holder's pid.
	ErrLocked = errors.New("ledger is locked by another writer")
	// ErrCorrupt: the file is not a ledger this package wrote (anything but a torn tail). The
	// error is a *CorruptError with the offset and seq of the first bad line.
	ErrCorrupt = errors.New("ledger is corrupt")
	// ErrTornTail: Verify found an incomplete final record; Open would repair it.
	ErrTornTail = errors.New("ledger has a torn tail")
	// ErrIncomplete: the file holds no complete header record — its creation never finished, so
	// nothing in it was ever acknowledged. Open refuses it; the caller may remove the directory.
	ErrIncomplete = errors.New("ledger has no complete header: its creation did not finish")
	// ErrFaulted: an earlier write or fsync failed; this Ledger appends nothing more. Errors
	// wrapping it also wrap the original cause.
	ErrFaulted = errors.New("ledger is faulted by an earlier write error")
	// ErrRollback: an anchored (seq, h) is no longer in the ledger.
	ErrRollback = errors.New("ledger was rolled back")
	// ErrTooLarge: a record would exceed MaxLineBytes; store the payload with PutBlob.
	ErrTooLarge = errors.New("ledger record too large")
	// ErrReadOnly: a write on a Ledger from OpenReadOnly.
	ErrReadOnly = errors.New("ledger is open read-only")
	// ErrClosed: a call after Close.
	ErrClosed = errors.New("ledger is closed")
	// ErrUnsupportedVersion: a record's format version is newer than this reader.
	ErrUnsupportedVersion = errors.New("ledger format version not supported")
	// ErrDuplicateID: Append with an id the ledger already holds.
	ErrDuplicateID = errors.New("ledger record id already used")
	// ErrUnknownParent: Append with a parent id the ledger does not hold.
	ErrUnknownParent = errors.New("ledger parent id not found")
	// ErrBlobDigest: a blob's content does not match its digest.
	ErrBlobDigest = errors.New("blob content does not match its digest")
)

// CorruptError locates the first line that is neither a valid record nor a torn tail.
type CorruptError struct {
	Path   string // the ledger file
	Offset int64  // byte offset of the first bad line
	Seq    int64  // the seq that line should have had
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ledger %s is corrupt at offset %d (seq %d): %s", e.Path, e.Offset, e.Seq, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// LockedError says who holds the writer lock.
type LockedError struct {
	Path string // the lock file
	PID  int    // 0 when the holder's pid could not be read
}

func (e *LockedError) Error() string {
	if e.PID <= 0 {
		return fmt.Sprintf("ledger is locked by another process (lock file %s; pid unknown)", e.Path)
	}
	return fmt.Sprintf("ledger is locked by pid %d (lock file %s)", e.PID, e.Path)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }
