package contextpack

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxImportDepth bounds how many hops of @path imports are followed from a context file: an
// import found in a file that is itself MaxImportDepth hops away is left as text, with a
// diagnostic.
const MaxImportDepth = 5

// LocalContextName is the personal context file read after a directory's context file.
const LocalContextName = "CLAUDE.local.md"

// contextIn loads the context files of dir: the first of AGENTS.md and AGENTS.MD present,
// then the first of CLAUDE.md, CLAUDE.MD and (in a project directory) .claude/CLAUDE.md —
// unless it is the file loaded already or a byte-for-byte copy of it —, then (in a project
// directory) CLAUDE.local.md; each is followed by what it imports. A non-empty limit is the
// directory the files must resolve inside (the project root). Without trusted, the files are
// only listed as untrusted.
func (l *loader) contextIn(dir, limit string, trusted bool) {
	var first string
	for _, name := range ContextFileNames[:2] {
		if p := filepath.Join(dir, name); l.contextFile(p, limit, trusted) {
			first = p
			break
		}
	}
	claude := ContextFileNames[2:]
	if limit != "" {
		claude = append(slices.Clone(claude), filepath.Join(".claude", "CLAUDE.md"))
	}
	for _, name := range claude {
		p := filepath.Join(dir, name)
		if !l.exists(p) {
			continue
		}
		if first == "" || !sameContent(first, p) {
			l.contextFile(p, limit, trusted)
		}
		break
	}
	if limit != "" {
		l.contextFile(filepath.Join(dir, LocalContextName), limit, trusted)
	}
}

// sameContent reports whether the files at a and b are one file or hold the same bytes (both
// read up to MaxFileBytes).
func sameContent(a, b string) bool {
	if sameFile(a, b) {
		return true
	}
	da, _, errA := readBounded(a, MaxFileBytes)
	db, _, errB := readBounded(b, MaxFileBytes)
	return errA == nil && errB == nil && bytes.Equal(da, db)
}

// contextFile loads the context file p, if it exists, and what it imports; it reports
// whether p exists.
func (l *loader) contextFile(p, limit string, trusted bool) bool {
	if !l.exists(p) {
		return false
	}
	if !trusted {
		l.src.Untrusted = append(l.src.Untrusted, p)
		return true
	}
	if l.loaded(p) {
		return true
	}
	if f, ok := l.read(p, limit); ok {
		l.remember(p)
		l.src.Context = append(l.src.Context, *f)
		l.imports(*f, limit, []string{p})
	}
	return true
}

// loaded reports whether the file at p was loaded already (by any name).
func (l *loader) loaded(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(l.seen, func(prev os.FileInfo) bool { return os.SameFile(prev, fi) })
}

func (l *loader) remember(p string) {
	if fi, err := os.Stat(p); err == nil {
		l.seen = append(l.seen, fi)
	}
}

// imports loads the files f imports with @path, depth first, in the order they appear. chain
// is the import chain down to f (f last). limit is the project root for a project file, ""
// for a user one. A target must resolve, through its symbolic links, inside the project root
// or the user's home directory; one outside the project imported by a project file loads
// only in a trusted project (else it is listed as untrusted).
func (l *loader) imports(f File, limit string, chain []string) {
	for _, ref := range importRefs(f.Text) {
		target, ref, ok := l.importTarget(f.Path, ref)
		if !ok {
			continue
		}
		if len(chain) > MaxImportDepth {
			l.diag("%s: import @%s not expanded: imports are followed at most %d hops deep", f.Path, ref, MaxImportDepth)
			continue
		}
		if i := slices.IndexFunc(chain, func(c string) bool { return sameFile(c, target) }); i >= 0 {
			l.diag("%s: import @%s refused: it forms a cycle (%s)", f.Path, ref, strings.Join(append(slices.Clone(chain[i:]), target), " → "))
			continue
		}
		real, err := filepath.EvalSymlinks(target)
		if err != nil {
			l.diag("%s: import @%s skipped: %v", f.Path, ref, err)
			continue
		}
		inProject := limit != "" && within(real, limit)
		inHome := l.userHome != "" && within(real, l.userHome)
		if !inProject && !inHome && !(limit == "" && l.root != "" && within(real, l.root)) {
			l.diag("%s: import @%s refused: %s is outside the project and the home directory", f.Path, ref, real)
			continue
		}
		if limit != "" && !inProject && !l.trusted {
			l.src.Untrusted = append(l.src.Untrusted, target)
			continue
		}
		if l.loaded(target) {
			continue // loaded already: its text is in the prompt once
		}
		g, ok := l.read(target, "")
		if !ok {
			continue
		}
		l.remember(target)
		g.ImportedBy, g.Depth = f.Path, len(chain)
		l.src.Context = append(l.src.Context, *g)
		l.imports(*g, limit, append(slices.Clone(chain), target))
	}
}

// importTarget resolves ref, imported by the file at from, to an absolute path, and returns
// the ref as resolved (trailing punctuation dropped when the ref names no file with it). A
// ref that names no file is not an import (a mention such as @someone stays text); one that
// looks like a path (it holds a "/" or a ".") is reported.
func (l *loader) importTarget(from, ref string) (string, string, bool) {
	for _, cand := range []string{ref, strings.TrimRight(ref, ".,;:!?)]}'\"")} {
		if cand == "" {
			continue
		}
		var p string
		switch {
		case cand == "~" || strings.HasPrefix(cand, "~/"):
			if l.userHome == "" {
				continue
			}
			p = filepath.Join(l.userHome, strings.TrimPrefix(cand, "~"))
		case filepath.IsAbs(cand):
			p = filepath.Clean(cand)
		default:
			p = filepath.Join(filepath.Dir(from), cand)
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			l.diag("%s: import @%s skipped: it is a directory", from, cand)
			return "", "", false
		}
		return p, cand, true
	}
	if strings.ContainsAny(ref, "/.") {
		l.diag("%s: import @%s skipped: no such file", from, ref)
	}
	return "", "", false
}

// Mentions returns the @path references of text as an import reads them (see importRefs):
// the UI attaches the files a prompt mentions by the same reading.
func Mentions(text string) []string { return importRefs(text) }

// importRefs returns the @path references in text, in order: an "@" at the start of a line
// or after white space, followed by the path (up to the next white space). References inside
// fenced code blocks and inline code spans are text, not imports.
func importRefs(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) <= 3 {
			if m := fenceMarker(trimmed); m != "" {
				switch {
				case fence == "":
					fence = m
					continue
				case m[0] == fence[0] && len(m) >= len(fence) && strings.TrimSpace(trimmed[len(m):]) == "":
					fence = ""
					continue
				}
			}
		}
		if fence != "" {
			continue
		}
		fields := strings.Fields(stripCodeSpans(line))
		for _, w := range fields {
			if len(w) > 1 && w[0] == '@' {
				out = append(out, w[1:])
			}
		}
	}
	return out
}

// fenceMarker returns the run of backticks or tildes (three or more) opening line, or "".
func fenceMarker(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// stripCodeSpans blanks the inline code spans of line (a run of backticks up to the next run
// of the same length), so nothing inside them reads as an import.
func stripCodeSpans(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end; k++ {
			b[k] = ' '
		}
		i = end
	}
	return string(b)
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
