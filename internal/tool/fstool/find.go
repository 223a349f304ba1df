package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/tool"
)

// DefaultFindLimit is the number of results find returns when no limit is given.
const DefaultFindLimit = 1000

// defaultFindLimitText is DefaultFindLimit in the tool's description (TestLimitTexts).
const defaultFindLimitText = "1000"

type findArgs struct {
	Pattern string `json:"pattern" jsonschema:"Glob pattern, e.g. '*.go', '**/*_test.go' or 'src/**/*.ts'. Without a '/', it is matched against file names at any depth; with one, against paths relative to the search directory"`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search, relative to the workspace (default: the workspace root)"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"Maximum number of results (default 1000)"`
}

// FindDetails is the Details of a find result.
type FindDetails struct {
	// ResultLimitReached is the limit that cut the results, if one did.
	ResultLimitReached int `json:"resultLimitReached,omitempty"`
	// Truncation is set when the output was cut at the byte limit.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
	// Source is "git" when the candidates came from git ls-files (so .gitignore applied),
	// "walk" when from a directory walk.
	Source string `json:"source"`
}

type findTool struct{ ws *tool.Workspace }

// Find returns the find tool: paths under a directory matching a glob pattern (with "**",
// github.com/bmatcuk/doublestar syntax), relative to that directory, sorted, directories with
// a trailing "/". A pattern without "/" is matched against the last path element, one with
// "/" against the whole relative path. Hidden files are included.
//
// Inside a git work tree the candidates are `git ls-files -co --exclude-standard -z` (tracked
// and untracked files, .gitignore and the other standard excludes applied; tracked files
// deleted from disk are dropped) plus their parent directories. Outside one, or when git is
// unavailable, a walk of the directory that skips .git and does not follow symbolic links.
// git runs through gitx, so nothing the repository configures runs as a command. At most limit
// results (default [DefaultFindLimit]) and [tool.MaxBytes] of output. A path the workspace's
// Guard refuses to read is not listed. Replay: safe.
func Find(ws *tool.Workspace) tool.Tool { return &findTool{ws: ws} }

// findSchema is the JSON Schema of findArgs, written out rather than built by reflection at
// start-up; TestSchemasMatchArgs checks it against tool.SchemaFor[findArgs].
const findSchema = `{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern, e.g. '*.go', '**/*_test.go' or 'src/**/*.ts'. Without a '/', it is matched against file names at any depth; with one, against paths relative to the search directory","minLength":1},"path":{"type":"string","description":"Directory to search, relative to the workspace (default: the workspace root)"},"limit":{"type":["null","integer"],"description":"Maximum number of results (default 1000)","minimum":1}},"required":["pattern"],"additionalProperties":false}`

func (t *findTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "find",
		Description: "Find files and directories by glob pattern, e.g. '*.go' (any depth), '**/*_test.go' or 'cmd/**/main.go'. " +
			"Results are paths relative to the searched directory, sorted, directories ending in '/'. " +
			"Files ignored by .gitignore are skipped. Returns at most " + defaultFindLimitText + " results unless limit says otherwise.",
		Snippet: "Find files by glob pattern (respects .gitignore)",
		Brief:   "Find files below path by glob ('*.go': names at any depth; 'cmd/**/main.go': paths); at most limit (" + defaultFindLimitText + ").",
		Schema:  json.RawMessage(findSchema),
		Replay:  tool.ReplaySafe,
		Local:   true,
	}
}

func (t *findTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a findArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	ws := viewFor(t.ws, a.Path, false)
	pattern := strings.TrimPrefix(strings.TrimSpace(a.Pattern), "./")
	if !doublestar.ValidatePattern(pattern) {
		return tool.Result{}, fmt.Errorf("invalid glob pattern %q (check brackets and braces)", a.Pattern)
	}
	shown := a.Path
	if shown == "" {
		shown = "."
	}
	rel, err := resolve(ws, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	st, err := ws.Root.Stat(rel)
	if err != nil {
		return tool.Result{}, fsError(shown, err)
	}
	if !st.IsDir() {
		return tool.Result{}, fmt.Errorf("Not a directory: %s", shown)
	}
	if rel, err = listedDir(ws, rel, shown); err != nil {
		return tool.Result{}, err
	}
	limit := DefaultFindLimit
	if a.Limit != nil {
		limit = *a.Limit
	}

	details := FindDetails{Source: "git"}
	files, dirs, err := gitFiles(ctx, filepath.Join(ws.Dir, rel))
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		details.Source = "walk"
		files, dirs, err = walkFiles(ctx, ws, rel)
		if err != nil {
			return tool.Result{}, err
		}
	}

	withSlash := strings.Contains(pattern, "/")
	match := func(p string) bool {
		if withSlash {
			return doublestar.MatchUnvalidated(pattern, p)
		}
		return doublestar.MatchUnvalidated(pattern, path.Base(p))
	}
	var results []string
	for _, f := range files {
		if match(f) && listable(ws, filepath.Join(rel, filepath.FromSlash(f))) {
			if details.Source == "git" {
				// Tracked files deleted from the work tree are still in the index.
				if _, err := ws.Root.Lstat(filepath.Join(rel, filepath.FromSlash(f))); err != nil {
					continue
				}
			}
			results = append(results, f)
		}
	}
	for _, d := range dirs {
		if match(d) && listable(ws, filepath.Join(rel, filepath.FromSlash(d))) {
			results = append(results, d+"/")
		}
	}
	if len(results) == 0 {
		return tool.TextResult("No files found matching pattern"), nil
	}
	sort.Strings(results)
	if len(results) > limit {
		results = results[:limit]
		details.ResultLimitReached = limit
	}
	var limitNotice string
	if details.ResultLimitReached > 0 {
		limitNotice = fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine pattern", limit, limit*2)
	}
	text, tr := listing(results, limitNotice)
	details.Truncation = tr
	res := tool.TextResult(text)
	res.Details = details
	return res, nil
}

// gitFiles lists the files under dir that git does not ignore, as slash paths relative to
// dir, and the directories that contain them. It fails when dir is not in a git work tree.
func gitFiles(ctx context.Context, dir string) (files, dirs []string, err error) {
	names, err := gitx.Runner{Dir: dir}.LsFiles(ctx, "-co", "--exclude-standard")
	if err != nil {
		return nil, nil, err
	}
	seenFile := map[string]bool{}
	seenDir := map[string]bool{}
	for _, name := range names {
		if seenFile[name] {
			continue
		}
		seenFile[name] = true
		files = append(files, name)
		for d := path.Dir(name); d != "." && !seenDir[d]; d = path.Dir(d) {
			seenDir[d] = true
			dirs = append(dirs, d)
		}
	}
	return files, dirs, nil
}

// walkFiles lists the files and directories under rel through the workspace root, skipping
// .git directories, as slash paths relative to rel.
func walkFiles(ctx context.Context, ws *tool.Workspace, rel string) (files, dirs []string, err error) {
	root := filepath.ToSlash(rel)
	n := 0
	err = fs.WalkDir(ws.Root.FS(), root, func(p string, d fs.DirEntry, err error) error {
		if n++; n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entry: skip it
		}
		if p == root {
			return nil
		}
		r := strings.TrimPrefix(p, root+"/")
		if root == "." {
			r = p
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			dirs = append(dirs, r)
			return nil
		}
		files = append(files, r)
		return nil
	})
	if err != nil {
		if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
			return nil, nil, err
		}
		return nil, nil, fsError(rel, err)
	}
	return files, dirs, nil
}
