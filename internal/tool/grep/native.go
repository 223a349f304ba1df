package grep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/gitx"
)

// native is the pure-Go backend.
type native struct{}

// NewNative returns the pure-Go backend. Inside a git work tree it lists files with
// `git ls-files`; without git (or outside a work tree) it walks the tree.
func NewNative() Backend { return native{} }

func (native) Name() string { return "native" }

const (
	blockSize   = 256 << 10 // bytes read per step
	binaryProbe = 64 << 10  // a NUL this early marks a file binary
)

func (native) Search(ctx context.Context, q Query, found func(Match) bool) error {
	m, err := newMatcher(q)
	if err != nil {
		return err
	}
	g, err := parseGlob(q.Glob)
	if err != nil {
		return err
	}
	fi, err := q.Root.Lstat(q.Path)
	if err != nil {
		return err
	}
	s := &scanner{buf: make([]byte, blockSize), m: m, found: found}
	if fi.Mode().IsRegular() {
		s.file(q.Root, q.Path, true)
		return nil
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is neither a file nor a directory", q.Path)
	}
	files, err := listFiles(ctx, q.Dir, q.Root, q.Path)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !g.selects(f) || q.Skip != nil && q.Skip(f) {
			continue
		}
		if s.file(q.Root, f, false) {
			return nil
		}
	}
	return nil
}

// listFiles returns the regular files under the directory rel in search order.
func listFiles(ctx context.Context, dir string, root *os.Root, rel string) ([]string, error) {
	files, ok := gitFiles(ctx, dir, root, rel)
	if !ok {
		var err error
		if files, err = walkFiles(root, rel); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(files, comparePaths)
	return slices.Compact(files), nil
}

// gitFiles lists the files under rel that git does not ignore (tracked or untracked),
// descending into nested repositories. ok is false when rel is not in a work tree, git is
// missing, or rel itself is ignored (then everything under it is searched, as ripgrep does
// for a directory named explicitly).
func gitFiles(ctx context.Context, dir string, root *os.Root, rel string) (files []string, ok bool) {
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	entries, err := gitx.Runner{Dir: abs}.LsFiles(ctx, "-co", "--exclude-standard")
	if err != nil {
		return nil, false
	}
	if len(entries) == 0 && ignored(ctx, abs) {
		return nil, false
	}
	for _, e := range entries {
		p := path.Join(rel, strings.TrimSuffix(e, "/"))
		if underGit(p, rel) {
			continue
		}
		fi, err := root.Lstat(p)
		switch {
		case err != nil:
			// Deleted from the work tree but still in the index, or unreadable.
		case fi.Mode().IsRegular():
			files = append(files, p)
		case fi.IsDir():
			// A submodule or a nested repository.
			sub, ok := gitFiles(ctx, dir, root, p)
			if !ok {
				sub, _ = walkFiles(root, p)
			}
			files = append(files, sub...)
		}
	}
	return files, true
}

// ignored reports whether git ignores the directory abs.
func ignored(ctx context.Context, abs string) bool {
	_, err := gitx.Runner{Dir: filepath.Dir(abs)}.Run(ctx, "check-ignore", "-q", "--", filepath.Base(abs))
	return err == nil
}

// underGit reports whether p lies in a .git directory below the search root.
func underGit(p, root string) bool {
	if root != "." {
		p = strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == ".git" {
			return true
		}
	}
	return false
}

// walkFiles lists the regular files under rel, skipping .git directories and not following
// symbolic links.
func walkFiles(root *os.Root, rel string) ([]string, error) {
	var files []string
	err := fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == rel {
				return err
			}
			return nil // unreadable: skip
		}
		if d.Name() == ".git" && p != rel {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// matcher decides whether a line matches. Its next method finds a candidate in a run of
// whole lines such that no line before the candidate's line matches, so those lines are
// skipped unseen; the candidate's line is then tested on its own.
type matcher struct {
	lit   []byte // case-sensitive literal; line and block are nil
	line  *regexp.Regexp
	block *regexp.Regexp
	// fold, when set, replaces block for a case-insensitive literal: a part of it whose
	// characters have ASCII case variants only, which every matching line holds (up to case);
	// foldFirst lists the variants of its first byte.
	fold      []byte
	foldFirst string
}

func newMatcher(q Query) (*matcher, error) {
	if err := checkPattern(q); err != nil {
		return nil, err
	}
	literal := q.Literal
	if !literal {
		// A pattern without metacharacters is searched as a literal.
		if re, err := regexp.Compile(q.Pattern); err == nil {
			if prefix, complete := re.LiteralPrefix(); complete && prefix == q.Pattern {
				literal = true
			}
		}
	}
	if literal && !q.IgnoreCase {
		return &matcher{lit: []byte(q.Pattern)}, nil
	}
	expr := q.Pattern
	if literal {
		expr = regexp.QuoteMeta(expr)
	}
	if q.IgnoreCase {
		expr = "(?i)" + expr
	}
	line, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPattern, err)
	}
	m := &matcher{line: line}
	if literal {
		if run := asciiFoldRun(q.Pattern); run != "" {
			m.fold = []byte(run)
			m.foldFirst = strings.ToLower(run[:1]) + strings.ToUpper(run[:1])
			return m, nil
		}
	}
	// In multi-line mode ^ and $ hold at line boundaries, so a line's match is also a match
	// of the block; \A and \z are the exception.
	if re, err := syntax.Parse("(?m)"+expr, syntax.Perl); err == nil && !hasTextAnchor(re) {
		m.block, _ = regexp.Compile("(?m)" + expr)
	}
	return m, nil
}

// asciiFoldRun returns the longest run of characters of lit whose case variants are all
// ASCII (so a case-insensitive match of the run is a plain ASCII comparison), or "".
func asciiFoldRun(lit string) string {
	best, start := "", -1
	for i, r := range lit + "\x00" { // the sentinel ends the last run
		ok := i < len(lit) && asciiOrbit(r)
		switch {
		case ok && start < 0:
			start = i
		case !ok && start >= 0:
			if i-start > len(best) {
				best = lit[start:i]
			}
			start = -1
		}
	}
	return best
}

// asciiOrbit reports whether r and all its simple case variants are ASCII.
func asciiOrbit(r rune) bool {
	for f := r; ; {
		if f >= utf8.RuneSelf {
			return false
		}
		if f = unicode.SimpleFold(f); f == r {
			return true
		}
	}
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasTextAnchor)
}

func (m *matcher) matchLine(line []byte) bool {
	if m.line == nil {
		return bytes.Contains(line, m.lit)
	}
	return m.line.Match(line)
}

// next returns the offset of the leftmost candidate in block, or -1.
func (m *matcher) next(block []byte) int {
	switch {
	case m.line == nil:
		return bytes.Index(block, m.lit)
	case m.fold != nil:
		for off := 0; ; {
			i := bytes.IndexAny(block[off:], m.foldFirst)
			if i < 0 {
				return -1
			}
			i += off
			if i+len(m.fold) <= len(block) && bytes.EqualFold(block[i:i+len(m.fold)], m.fold) {
				return i
			}
			off = i + 1
		}
	case m.block != nil:
		if loc := m.block.FindIndex(block); loc != nil {
			return loc[0]
		}
		return -1
	default:
		return 0 // no prefilter: try every line
	}
}

// scanner searches files, reusing one buffer.
type scanner struct {
	buf   []byte
	m     *matcher
	found func(Match) bool
}

// file searches one file and reports whether found asked to stop. An explicit file is
// searched even when it looks binary.
func (s *scanner) file(root *os.Root, p string, explicit bool) (stop bool) {
	f, err := root.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := s.buf
	n, lineNo, first, eof := 0, 1, true, false
	for {
		for n < len(buf) && !eof {
			k, err := f.Read(buf[n:])
			n += k
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return false
			}
		}
		if first {
			first = false
			if !explicit && bytes.IndexByte(buf[:min(n, binaryProbe)], 0) >= 0 {
				return false
			}
		}
		end := n
		if !eof {
			i := bytes.LastIndexByte(buf[:n], '\n')
			if i < 0 { // a line longer than the buffer
				buf = append(buf, make([]byte, len(buf))...)
				continue
			}
			end = i + 1
		}
		block, last := buf[:end], eof
		if !explicit {
			if z := bytes.IndexByte(block, 0); z >= 0 {
				block, last = block[:bytes.LastIndexByte(block[:z], '\n')+1], true
			}
		}
		var stop bool
		if lineNo, stop = s.block(p, block, lineNo); stop || last {
			if cap(buf) > cap(s.buf) && cap(buf) <= 4*blockSize {
				s.buf = buf
			}
			return stop
		}
		n = copy(buf, buf[end:n])
	}
}

// block searches a run of whole lines (the last may lack its newline) starting at line
// lineNo; it returns the number of the line after the run.
func (s *scanner) block(p string, block []byte, lineNo int) (int, bool) {
	pos := 0
	for pos < len(block) {
		at := s.m.next(block[pos:])
		if at < 0 {
			break
		}
		at += pos
		if at == len(block) && block[at-1] == '\n' {
			break // an empty match after the final newline is not on a line
		}
		start := bytes.LastIndexByte(block[pos:at], '\n') + 1 + pos
		lineNo += bytes.Count(block[pos:start], []byte{'\n'})
		end := len(block)
		if i := bytes.IndexByte(block[start:], '\n'); i >= 0 {
			end = start + i
		}
		if s.m.matchLine(block[start:end]) && !s.found(Match{Path: p, Line: lineNo}) {
			return lineNo, true
		}
		pos = end + 1
		lineNo++
	}
	if pos < len(block) {
		lineNo += bytes.Count(block[pos:], []byte{'\n'})
	}
	return lineNo, false
}
