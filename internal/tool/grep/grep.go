package grep

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/tool"
)

const (
	// DefaultLimit is the number of matching lines reported when a call gives no limit.
	DefaultLimit = 100
	// MaxLineChars is the number of characters of a line shown before it is cut.
	MaxLineChars = 500
	// defaultLimitText and maxLineCharsText are DefaultLimit and MaxLineChars in the tool's
	// description (TestLimitTexts).
	defaultLimitText = "100"
	maxLineCharsText = "500"
)

// Options configure the grep tool.
type Options struct {
	// Backend finds matches; nil picks ripgrep when rg is on PATH, else the native backend.
	Backend Backend
}

// Grep is the grep tool. It is safe for concurrent use.
type Grep struct {
	ws      *tool.Workspace
	backend func() Backend // chosen on first use: looking rg up on PATH is a stat per entry
	// shown is the directory reported paths are shown under: "" for the workspace (paths
	// relative to it), an extra root's absolute directory when the search lies in one.
	shown string
}

// New returns the grep tool searching ws.
func New(ws *tool.Workspace, opts Options) *Grep {
	backend := func() Backend { return opts.Backend }
	if opts.Backend == nil {
		backend = sync.OnceValue(func() Backend {
			if b, ok := LookRipgrep(); ok {
				return b
			}
			return NewNative()
		})
	}
	return &Grep{ws: ws, backend: backend}
}

// Backend returns the backend in use.
func (g *Grep) Backend() Backend { return g.backend() }

const schema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Search pattern (regular expression, or a literal string with literal=true); matched one line at a time"},
    "path": {"type": "string", "description": "Directory or file to search, relative to the workspace, or absolute inside an additional directory (default: the whole workspace)"},
    "glob": {"type": "string", "description": "Filter files: without '/' it matches file names ('*.ts', '*.{go,mod}'), with '/' paths relative to the workspace ('src/**/*.test.ts'); a leading '!' excludes"},
    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
    "literal": {"type": "boolean", "description": "Treat pattern as a literal string instead of a regular expression (default: false)"},
    "context": {"type": "integer", "minimum": 0, "description": "Lines to show before and after each match (default: 0)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of matching lines to return (default: 100)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// Spec describes the tool.
func (g *Grep) Spec() tool.Spec {
	return tool.Spec{
		Name: "grep",
		Description: "Search file contents for a pattern. Returns matching lines with file paths and line numbers. " +
			"Respects .gitignore. Output is truncated to " + defaultLimitText + " matches or " + tool.MaxBytesText + " (whichever is hit first); long lines are cut to " + maxLineCharsText + " characters.",
		Snippet: "Search file contents for patterns (respects .gitignore)",
		Brief: "Search the files below path (default: all) for a regular expression (literal: a plain string); " +
			"glob filters names ('*.go') or paths ('src/**/*.ts'; '!' excludes); context: lines around; at most limit (" + defaultLimitText + ") matches.",
		Schema: json.RawMessage(schema),
		Replay: tool.ReplaySafe,
		Local:  true,
	}
}

type args struct {
	Pattern    string  `json:"pattern"`
	Path       *string `json:"path"`
	Glob       *string `json:"glob"`
	IgnoreCase *bool   `json:"ignoreCase"`
	Literal    *bool   `json:"literal"`
	Context    *int    `json:"context"`
	Limit      *int    `json:"limit"`
}

// Details is the structured outcome placed in [tool.Result.Details].
type Details struct {
	// MatchLimitReached is the limit when more matches existed than were reported.
	MatchLimitReached int `json:"matchLimitReached,omitempty"`
	// LinesTruncated reports that some lines were cut to MaxLineChars characters.
	LinesTruncated bool `json:"linesTruncated,omitempty"`
	// Truncation describes the byte cut of the whole output; nil when there was none.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
}

// Run searches.
func (g *Grep) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, fmt.Errorf("invalid arguments: %w", err)
	}
	limit, ctxLines := DefaultLimit, 0
	if a.Limit != nil {
		if *a.Limit < 1 {
			return tool.Result{}, fmt.Errorf("invalid limit %d: give a positive number of matches", *a.Limit)
		}
		limit = *a.Limit
	}
	if a.Context != nil {
		if *a.Context < 0 {
			return tool.Result{}, fmt.Errorf("invalid context %d: give zero or more lines", *a.Context)
		}
		ctxLines = *a.Context
	}
	rel, err := g.resolve(deref(a.Path))
	if errors.Is(err, tool.ErrOutsideWorkspace) {
		// A path in an additional directory: searched through that root, confined and guarded
		// as the workspace is.
		if view, vrel, ok := g.ws.OutsideView(pathrule.PlainSpaces(deref(a.Path)), false); ok {
			sub := &Grep{ws: view, backend: g.backend, shown: view.Dir}
			a.Path = &vrel
			if rel, err = sub.resolve(vrel); err != nil {
				return tool.Result{}, err
			}
			return sub.search(ctx, a, rel, limit, ctxLines)
		}
	}
	if err != nil {
		return tool.Result{}, err
	}
	return g.search(ctx, a, rel, limit, ctxLines)
}

// search runs the search of a, its path resolved to rel, in g's workspace.
func (g *Grep) search(ctx context.Context, a args, rel string, limit, ctxLines int) (tool.Result, error) {
	skip, err := g.guard(rel, deref(a.Path))
	if err != nil {
		return tool.Result{}, err
	}
	q := Query{
		Dir: g.ws.Dir, Root: g.ws.Root, Path: rel, Skip: skip,
		Pattern: a.Pattern, Literal: deref(a.Literal), IgnoreCase: deref(a.IgnoreCase), Glob: deref(a.Glob),
	}
	if err := checkPattern(q); err != nil {
		return tool.Result{}, err
	}
	filter, err := parseGlob(q.Glob)
	if err != nil {
		return tool.Result{}, err
	}
	var matches []Match
	limitReached := false
	err = g.backend().Search(ctx, q, func(m Match) bool {
		if !filter.selects(m.Path) || skip != nil && skip(m.Path) {
			return true
		}
		if len(matches) == limit {
			limitReached = true
			return false
		}
		matches = append(matches, m)
		return true
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{}, err
	}
	if len(matches) == 0 {
		return tool.Result{Content: tool.TextResult("No matches found").Content, Details: &Details{}}, nil
	}
	out, linesCut := g.format(matches, ctxLines)
	tr := tool.TruncateHead(out, math.MaxInt, tool.MaxBytes)
	d := &Details{LinesTruncated: linesCut}
	text := tr.Content
	var notices []string
	if limitReached {
		d.MatchLimitReached = limit
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", limit, limit*2))
	}
	if tr.Truncated {
		d.Truncation = &tr
		notices = append(notices, tool.FormatSize(tool.MaxBytes)+" limit reached")
	}
	if linesCut {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", MaxLineChars))
	}
	if len(notices) > 0 {
		text += "\n\n[" + strings.Join(notices, ". ") + "]"
	}
	return tool.Result{Content: tool.TextResult(text).Content, Details: d}, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// resolve turns the path argument into a slash-separated workspace-relative path without
// symbolic links, refusing anything that leaves the workspace.
func (g *Grep) resolve(p string) (string, error) {
	rel, err := g.ws.Rel(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(g.ws.Dir, rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("path not found: %s", p)
		}
		return "", err
	}
	r, err := filepath.Rel(g.ws.Dir, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %q leads to %s through a symbolic link; search inside the workspace", tool.ErrOutsideWorkspace, p, real)
	}
	// The kernel's own check: os.Root refuses any escape.
	if _, err := g.ws.Root.Stat(r); err != nil {
		return "", fmt.Errorf("%w: %w", tool.ErrOutsideWorkspace, err)
	}
	return filepath.ToSlash(r), nil
}

// guard asks the workspace's Guard about the search: a path naming a file is judged
// itself (an error refuses the call); for a directory, the directory is judged and the
// returned function says which files under it to leave out — those the Guard refuses to
// read, by their path and hard link count — remembering each answer. Nil when the
// workspace has no Guard.
func (g *Grep) guard(rel, given string) (func(string) bool, error) {
	gd := g.ws.Guard
	if gd == nil {
		return nil, nil
	}
	named := false
	if r, err := g.ws.Rel(given); err == nil {
		named = filepath.ToSlash(r) == rel
	}
	fi, err := g.ws.Root.Lstat(rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", given, err)
	}
	if !fi.IsDir() {
		return nil, gd.Read(rel, named, linkCount(fi))
	}
	if err := gd.Read(rel, named, 0); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		if skip, ok := seen[p]; ok {
			return skip
		}
		var links uint64
		skip := true
		if fi, err := g.ws.Root.Lstat(p); err == nil {
			links = linkCount(fi)
			skip = gd.Read(p, false, links) != nil
		}
		seen[p] = skip
		return skip
	}, nil
}

// linkCount is a file's number of hard links (0 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// format renders matches grouped by file (they arrive in search order), merging the context
// of neighbouring matches. It reports whether some line was cut.
func (g *Grep) format(matches []Match, context int) (string, bool) {
	var sb strings.Builder
	cut := false
	for i := 0; i < len(matches); {
		j := i
		for j < len(matches) && matches[j].Path == matches[i].Path {
			j++
		}
		if g.formatFile(&sb, matches[i].Path, matches[i:j], context) {
			cut = true
		}
		i = j
	}
	return strings.TrimSuffix(sb.String(), "\n"), cut
}

func (g *Grep) formatFile(sb *strings.Builder, p string, ms []Match, context int) (cut bool) {
	isMatch := make(map[int]bool, len(ms))
	for _, m := range ms {
		isMatch[m.Line] = true
	}
	lines := map[int]string{}
	last := ms[len(ms)-1].Line + context
	if f, err := g.ws.Root.Open(p); err == nil {
		next := 0 // index into ms of the first match whose context may still come
		rd := bufio.NewReaderSize(f, 64<<10)
		for n := 1; n <= last; n++ {
			line, err := rd.ReadString('\n')
			if line == "" && err != nil {
				break
			}
			for next < len(ms) && ms[next].Line+context < n {
				next++
			}
			if next < len(ms) && ms[next].Line-context <= n {
				lines[n] = line
			}
			if err == io.EOF {
				break
			}
		}
		f.Close()
	}
	name := p
	if g.shown != "" {
		name = path.Join(filepath.ToSlash(g.shown), p)
	}
	printed := 0 // last line number printed
	for _, m := range ms {
		for n := max(m.Line-context, printed+1, 1); n <= m.Line+context; n++ {
			text, ok := lines[n]
			if !ok && n != m.Line {
				if n > m.Line {
					break // past the end of the file
				}
				continue
			}
			shown, c := clean(text)
			cut = cut || c
			sep := "-"
			if isMatch[n] {
				sep = ":"
			}
			fmt.Fprintf(sb, "%s%s%d%s %s\n", name, sep, n, sep, shown)
			printed = n
		}
	}
	return cut
}

// clean prepares a line for display: no line ending or carriage returns, valid UTF-8, at most
// MaxLineChars characters.
func clean(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	line = strings.ReplaceAll(line, "\r", "")
	line = strings.ToValidUTF8(line, "\uFFFD")
	if utf8.RuneCountInString(line) <= MaxLineChars {
		return line, false
	}
	i, n := 0, 0
	for i = range line {
		if n == MaxLineChars {
			break
		}
		n++
	}
	return line[:i] + "... [truncated]", true
}
