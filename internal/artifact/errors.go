package artifact

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel conditions. Match them with errors.Is; the typed errors below carry the details.
var (
	// ErrMalformed: the bytes are not an artifact this package accepts: invalid UTF-8, an
	// unterminated frontmatter block, frontmatter that is not one YAML mapping, duplicate keys.
	ErrMalformed = errors.New("artifact is malformed")
	// ErrInvalidDigest: a string is not a digest in the form "sha256:" + 64 lowercase hex.
	ErrInvalidDigest = errors.New("invalid digest")
	// ErrInvalidReference: a reference (or a pack) breaks the rules of its form: empty or
	// duplicate id, empty or non-canonical path, invalid digest, invalid UTF-8.
	ErrInvalidReference = errors.New("invalid artifact reference")
	// ErrOutsideRoots: a path is absolute, climbs out with "..", or resolves (through a symbolic
	// link) outside the allowed roots.
	ErrOutsideRoots = errors.New("path is outside the allowed roots")
	// ErrMissing: no allowed root holds the referenced file.
	ErrMissing = errors.New("referenced file is missing")
	// ErrNotRegular: the referenced path is a directory, a device, a pipe or another non-regular
	// file.
	ErrNotRegular = errors.New("referenced path is not a regular file")
	// ErrUnreadable: the referenced file exists but cannot be opened or read (permissions, I/O).
	ErrUnreadable = errors.New("referenced file cannot be read")
	// ErrTooLarge: a file exceeds MaxFileBytes.
	ErrTooLarge = errors.New("artifact file is too large")
	// ErrMismatch: a file's recomputed digest or fileDigest differs from its reference.
	ErrMismatch = errors.New("artifact digest mismatch")
	// ErrNotFound: the store holds no blob with the digest.
	ErrNotFound = errors.New("blob not in store")
	// ErrCorrupt: a stored blob's content does not match its digest. The error is a
	// *CorruptError.
	ErrCorrupt = errors.New("stored blob does not match its digest")
	// ErrInvalidGraph: a staleness graph has a duplicate or empty id, an invalid digest or a
	// cycle.
	ErrInvalidGraph = errors.New("invalid artifact graph")
)

// ReferenceError is one reference of a pack that could not be verified (or, in Build, one
// source that could not be read). Err is the sentinel condition; Cause, when not nil, is the
// underlying error (from the file system or the YAML parser). For ErrMismatch the Want and Got
// fields say what the reference expects and what the file holds now; a field that matches is
// equal in both.
type ReferenceError struct {
	Index int    // position in the pack (or in Build's sources), from 0
	ID    string // the reference id
	Path  string // the reference path, as written in the reference
	Err   error  // ErrInvalidReference, ErrOutsideRoots, ErrMissing, ErrNotRegular, ErrUnreadable, ErrTooLarge, ErrMalformed or ErrMismatch
	Cause error  // underlying error; may be nil

	WantDigest, GotDigest         Digest // ErrMismatch only
	WantFileDigest, GotFileDigest Digest // ErrMismatch only
}

func (e *ReferenceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "artifact reference %d (id %q, path %q): ", e.Index, e.ID, e.Path)
	cause := e.Cause
	if cause != nil && errors.Is(cause, e.Err) {
		b.WriteString(cause.Error())
		cause = nil
	} else {
		b.WriteString(e.Err.Error())
	}
	if errors.Is(e.Err, ErrMismatch) {
		if e.WantDigest != e.GotDigest {
			fmt.Fprintf(&b, "; digest: want %s, got %s", e.WantDigest, e.GotDigest)
		}
		if e.WantFileDigest != e.GotFileDigest {
			fmt.Fprintf(&b, "; fileDigest: want %s, got %s", e.WantFileDigest, e.GotFileDigest)
		}
	}
	if cause != nil {
		fmt.Fprintf(&b, ": %v", cause)
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause, so that errors.Is matches both.
func (e *ReferenceError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// PackError is every problem found while opening (or building) a pack, in reference order. Open
// and Build check every reference before failing, so one error lists them all.
type PackError struct {
	Problems []*ReferenceError
}

func (e *PackError) Error() string {
	if len(e.Problems) == 1 {
		return "artifact pack rejected: " + e.Problems[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "artifact pack rejected: %d problems", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns every problem, so that errors.Is(err, ErrMismatch) and
// errors.AsType[*ReferenceError](err) work on the whole error.
func (e *PackError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// CorruptError is a stored blob whose content does not hash to the digest it is stored under.
type CorruptError struct {
	Path string // the blob file
	Want Digest // the digest it is stored under
	Got  Digest // the digest of its content
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("stored blob %s (%s) is corrupt: its content has %s", e.Want, e.Path, e.Got)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
