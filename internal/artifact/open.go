package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxFileBytes is the largest artifact file Open and Build read.
const MaxFileBytes = 32 << 20

// OpenedPack is a pack whose every file was read and verified. It holds the verified bytes, so
// nothing that uses it reads the files again.
type OpenedPack struct {
	Pack      Pack     // a copy of the pack that was opened
	Digest    Digest   // the pack digest
	Artifacts []Opened // one per reference, in pack order
}

// Opened is one verified artifact of an OpenedPack.
type Opened struct {
	Reference Reference
	Root      string    // the root directory the file was read from, as given to Open
	Artifact  *Artifact // the parsed file; its digests equal the reference's
}

// Source names a file to put in a pack by Build. Path is relative to the roots (slash- or
// OS-separated) or absolute inside one of them.
type Source struct {
	ID   string
	Path string
}

// Open reads every file of p through the allowed roots, recomputes both digests and compares
// them with the references. It returns the opened pack only when every reference verifies;
// otherwise the error is a *PackError listing each failing reference (as a *ReferenceError) and
// no pack is returned. A reference that breaks the form of Validate is reported in the same
// way, without its file being read. An empty roots list, a root that cannot be opened, or a
// pack name or version that is not UTF-8 is a plain error.
//
// A reference path is resolved against the roots in the order given: the first root that holds
// the path serves it. A later root is not tried when the first one's file fails to verify, is
// not a regular file, or is reached through a link that leads outside its root.
// Every access goes through an [os.Root], so a symbolic link that leads outside its root is
// refused (ErrOutsideRoots) even when it was swapped in after the pack was built.
func Open(p Pack, roots ...string) (*OpenedPack, error) {
	if err := p.validateHeader(); err != nil {
		return nil, err
	}
	rs, err := openRoots(roots)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	bad := map[int]*ReferenceError{}
	for _, e := range p.problems() {
		bad[e.Index] = e
	}
	op := &OpenedPack{Pack: Pack{Name: p.Name, Version: p.Version, References: append([]Reference(nil), p.References...)}}
	var problems []*ReferenceError
	for i, ref := range op.Pack.References {
		if e := bad[i]; e != nil {
			problems = append(problems, e)
			continue
		}
		data, root, err := rs.read(ref.Path)
		if err != nil {
			problems = append(problems, referenceError(i, ref.ID, ref.Path, err))
			continue
		}
		a, err := Parse(data)
		if err != nil {
			problems = append(problems, referenceError(i, ref.ID, ref.Path, err))
			continue
		}
		if a.Digest != ref.Digest || a.FileDigest != ref.FileDigest {
			problems = append(problems, &ReferenceError{
				Index: i, ID: ref.ID, Path: ref.Path, Err: ErrMismatch,
				WantDigest: ref.Digest, GotDigest: a.Digest,
				WantFileDigest: ref.FileDigest, GotFileDigest: a.FileDigest,
			})
			continue
		}
		op.Artifacts = append(op.Artifacts, Opened{Reference: ref, Root: rs.dirs[root], Artifact: a})
	}
	if len(problems) > 0 {
		return nil, &PackError{Problems: problems}
	}
	op.Digest, err = op.Pack.Digest()
	if err != nil {
		return nil, err // unreachable: the pack validated above
	}
	return op, nil
}

// Build reads each source through the allowed roots (as Open does) and returns the pack of
// their references, in the order given, with both digests computed. An absolute source path
// must lie inside one of the roots and is recorded relative to it; it is refused when an
// earlier root holds the same relative path, since Open would read that file instead. Failures
// are reported as in Open, with Index the position in sources.
func Build(name, version string, sources []Source, roots ...string) (Pack, error) {
	p := Pack{Name: name, Version: version}
	if err := p.validateHeader(); err != nil {
		return Pack{}, err
	}
	rs, err := openRoots(roots)
	if err != nil {
		return Pack{}, err
	}
	defer rs.close()
	var problems []*ReferenceError
	seen := map[string]int{}
	for i, src := range sources {
		fail := func(err error) { problems = append(problems, referenceError(i, src.ID, src.Path, err)) }
		rel, want, err := rs.relative(src.Path)
		if err != nil {
			fail(err)
			continue
		}
		if j, dup := seen[src.ID]; dup {
			fail(fmt.Errorf("%w: id %q is also source %d", ErrInvalidReference, src.ID, j))
			continue
		}
		seen[src.ID] = i
		data, root, err := rs.read(rel)
		if err != nil {
			fail(err)
			continue
		}
		if want >= 0 && root != want {
			fail(fmt.Errorf("%w: %q is shadowed by %s, which Open would read instead", ErrInvalidReference, src.Path, filepath.Join(rs.dirs[root], rel)))
			continue
		}
		a, err := Parse(data)
		if err != nil {
			fail(err)
			continue
		}
		ref := Reference{ID: src.ID, Path: rel, Digest: a.Digest, FileDigest: a.FileDigest}
		if err := ref.validate(); err != nil {
			fail(err)
			continue
		}
		p.References = append(p.References, ref)
	}
	if len(problems) > 0 {
		return Pack{}, &PackError{Problems: problems}
	}
	return p, nil
}

// rootSet is the allowed roots, opened.
type rootSet struct {
	dirs []string   // as given
	abs  []string   // absolute and symlink-resolved, for placing absolute source paths
	rs   []*os.Root // opened
}

func openRoots(dirs []string) (*rootSet, error) {
	if len(dirs) == 0 {
		return nil, errors.New("artifact: no allowed roots given")
	}
	s := &rootSet{dirs: dirs}
	for _, d := range dirs {
		r, err := os.OpenRoot(d)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("artifact: open root: %w", err)
		}
		s.rs = append(s.rs, r)
		abs, err := filepath.Abs(d)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("artifact: open root: %w", err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		s.abs = append(s.abs, abs)
	}
	return s, nil
}

func (s *rootSet) close() {
	for _, r := range s.rs {
		r.Close()
	}
}

// relative turns a source path into a canonical reference path. For an absolute path it also
// returns the index of the root it lies in (else -1).
func (s *rootSet) relative(p string) (rel string, root int, err error) {
	if !filepath.IsAbs(p) {
		rel = filepath.ToSlash(p)
		if rel != "" {
			rel = path.Clean(rel)
		}
		return rel, -1, checkPath(rel)
	}
	c := filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(filepath.Dir(c)); err == nil {
		c = filepath.Join(real, filepath.Base(c))
	}
	for i, dir := range s.abs {
		r, err := filepath.Rel(dir, c)
		if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(r)
		return rel, i, checkPath(rel)
	}
	return "", -1, fmt.Errorf("%w: %q is not inside any of the roots %q", ErrOutsideRoots, p, s.dirs)
}

// read returns the bytes of the canonical relative path p from the first root that holds it,
// and that root's index.
func (s *rootSet) read(p string) ([]byte, int, error) {
	name := filepath.FromSlash(p)
	for i, r := range s.rs {
		f, err := r.OpenFile(name, openFlags, 0)
		if err != nil {
			switch {
			case isEscape(err):
				return nil, i, fmt.Errorf("%w: %q resolves outside root %s (through a symbolic link)", ErrOutsideRoots, p, s.dirs[i])
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
				continue
			}
			return nil, i, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		data, err := readRegular(f)
		f.Close()
		if err != nil {
			return nil, i, fmt.Errorf("%s: %w", filepath.Join(s.dirs[i], name), err)
		}
		return data, i, nil
	}
	return nil, -1, fmt.Errorf("%w: %q is in none of the roots %q", ErrMissing, p, s.dirs)
}

// readRegular reads an open file that must be a regular file of at most MaxFileBytes.
func readRegular(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: mode %s", ErrNotRegular, fi.Mode().Type())
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, fi.Size(), MaxFileBytes)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + 1)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if buf.Len() > MaxFileBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxFileBytes)
	}
	return buf.Bytes(), nil
}

// isEscape reports whether err comes from an [os.Root] refusing a path that leads outside it
// (os does not export that error, only its text).
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}
