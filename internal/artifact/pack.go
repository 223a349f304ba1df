package artifact

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/strictjson"
)

// Reference binds an artifact id to a file and to both of its digests.
type Reference struct {
	ID         string `json:"id"`
	Path       string `json:"path"`
	Digest     Digest `json:"digest"`
	FileDigest Digest `json:"fileDigest"`
}

// NewReference returns the reference for an artifact file with the given id, path and content.
// The path is checked for form only (see Pack.Validate), not opened.
func NewReference(id, p string, data []byte) (Reference, error) {
	a, err := Parse(data)
	if err != nil {
		return Reference{}, err
	}
	r := Reference{ID: id, Path: p, Digest: a.Digest, FileDigest: a.FileDigest}
	if err := r.validate(); err != nil {
		return Reference{}, err
	}
	return r, nil
}

// Pack is an ordered list of artifact references, optionally named and versioned. The order is
// part of the pack: it is the order of rendering and it enters the pack digest.
type Pack struct {
	Name       string      `json:"name,omitempty"`
	Version    string      `json:"version,omitempty"`
	References []Reference `json:"references"`
}

// Validate checks the pack's form without touching the file system: name and version are valid
// UTF-8; every reference has a non-empty id unique in the pack, a canonical relative path and
// two valid digests. The first problem is returned as a *ReferenceError (wrapping
// ErrInvalidReference or ErrOutsideRoots), or a plain error wrapping ErrInvalidReference for
// the name and version.
func (p Pack) Validate() error {
	if err := p.validateHeader(); err != nil {
		return err
	}
	if errs := p.problems(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func (p Pack) validateHeader() error {
	if !utf8.ValidString(p.Name) || !utf8.ValidString(p.Version) {
		return fmt.Errorf("%w: pack name or version is not valid UTF-8", ErrInvalidReference)
	}
	return nil
}

// problems returns every reference that breaks the form, in order.
func (p Pack) problems() []*ReferenceError {
	var out []*ReferenceError
	seen := make(map[string]int, len(p.References))
	for i, r := range p.References {
		err := r.validate()
		if err == nil {
			if j, dup := seen[r.ID]; dup {
				err = fmt.Errorf("%w: id %q is also reference %d", ErrInvalidReference, r.ID, j)
			}
		}
		if _, dup := seen[r.ID]; !dup {
			seen[r.ID] = i
		}
		if err != nil {
			out = append(out, referenceError(i, r.ID, r.Path, err))
		}
	}
	return out
}

// referenceError turns err (wrapping one sentinel) into a *ReferenceError.
func referenceError(i int, id, p string, err error) *ReferenceError {
	re := &ReferenceError{Index: i, ID: id, Path: p, Cause: err}
	for _, s := range []error{ErrOutsideRoots, ErrMissing, ErrNotRegular, ErrUnreadable, ErrTooLarge, ErrMalformed, ErrMismatch, ErrInvalidReference} {
		if errors.Is(err, s) {
			re.Err = s
			break
		}
	}
	if re.Err == nil {
		re.Err = ErrInvalidReference
	}
	return re
}

func (r Reference) validate() error {
	switch {
	case r.ID == "":
		return fmt.Errorf("%w: empty id", ErrInvalidReference)
	case !utf8.ValidString(r.ID):
		return fmt.Errorf("%w: id is not valid UTF-8", ErrInvalidReference)
	case !r.Digest.Valid():
		return fmt.Errorf("%w: digest: %w: %q", ErrInvalidReference, ErrInvalidDigest, string(r.Digest))
	case !r.FileDigest.Valid():
		return fmt.Errorf("%w: fileDigest: %w: %q", ErrInvalidReference, ErrInvalidDigest, string(r.FileDigest))
	}
	return checkPath(r.Path)
}

// checkPath checks that p is a canonical reference path: non-empty, valid UTF-8, relative,
// slash-separated, already clean (no "." or ".." element, no empty element, no trailing slash),
// without backslash or NUL. Absolute paths and paths that climb out wrap ErrOutsideRoots.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", ErrInvalidReference)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: path is not valid UTF-8", ErrInvalidReference)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: %q is absolute; reference paths are relative to the pack roots", ErrOutsideRoots, p)
	}
	c := path.Clean(p)
	switch {
	case c == ".." || strings.HasPrefix(c, "../"):
		return fmt.Errorf("%w: %q climbs above the roots", ErrOutsideRoots, p)
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("%w: path %q holds a backslash or NUL", ErrInvalidReference, p)
	case c != p || c == ".":
		return fmt.Errorf("%w: path %q is not canonical (want %q, a file below a root)", ErrInvalidReference, p, c)
	}
	return nil
}

// Canonical returns the pack's canonical JSON, the bytes its digest is computed over (see the
// package documentation). It fails, wrapping ErrInvalidReference or ErrOutsideRoots, when the
// pack does not validate.
func (p Pack) Canonical() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+len(p.References)*200)
	b = append(b, '{')
	if p.Name != "" {
		b = append(b, `"name":`...)
		b = appendString(b, p.Name)
		b = append(b, ',')
	}
	b = append(b, `"references":[`...)
	for i, r := range p.References {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"digest":`...)
		b = appendString(b, string(r.Digest))
		b = append(b, `,"fileDigest":`...)
		b = appendString(b, string(r.FileDigest))
		b = append(b, `,"id":`...)
		b = appendString(b, r.ID)
		b = append(b, `,"path":`...)
		b = appendString(b, r.Path)
		b = append(b, '}')
	}
	b = append(b, ']')
	if p.Version != "" {
		b = append(b, `,"version":`...)
		b = appendString(b, p.Version)
	}
	b = append(b, '}')
	return b, nil
}

// Digest returns the pack digest: the digest of Canonical.
func (p Pack) Digest() (Digest, error) {
	c, err := p.Canonical()
	if err != nil {
		return "", err
	}
	return Sum(c), nil
}

// ParsePack decodes a pack from JSON strictly (no unknown or duplicate keys, no case-folded
// names, valid UTF-8, no trailing data) and validates it. Any JSON form is accepted, not only
// the canonical one; the digest is always computed over the canonical form.
func ParsePack(data []byte) (Pack, error) {
	var p Pack
	if err := strictjson.Unmarshal(data, &p); err != nil {
		return Pack{}, fmt.Errorf("%w: pack JSON: %w", ErrInvalidReference, err)
	}
	if err := p.Validate(); err != nil {
		return Pack{}, err
	}
	return p, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s (valid UTF-8) as a JSON string in the RFC 8785 form: '"' and '\' and
// the control characters U+0000..U+001F are escaped (\b \t \n \f \r in short form, the others
// as \u00xx with lowercase hex); every other character is written as its UTF-8 bytes.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
