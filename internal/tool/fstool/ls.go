package fstool

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/tool"
)

// DefaultLsLimit is the number of entries ls returns when no limit is given.
const DefaultLsLimit = 500

// defaultLsLimitText is DefaultLsLimit in the tool's description (TestLimitTexts).
const defaultLsLimitText = "500"

type lsArgs struct {
	Path  string `json:"path,omitempty" jsonschema:"Directory to list, relative to the workspace (default: the workspace root)"`
	Limit *int   `json:"limit,omitempty" jsonschema:"Maximum number of entries to return (default 500)"`
}

// LsDetails is the Details of an ls result.
type LsDetails struct {
	// EntryLimitReached is the limit that cut the listing, if one did.
	EntryLimitReached int `json:"entryLimitReached,omitempty"`
	// Truncation is set when the output was cut at the byte limit.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
}

type lsTool struct{ ws *tool.Workspace }

// Ls returns the ls tool: the entries of one directory, dotfiles included, sorted
// case-insensitively, directories marked with a trailing "/". Entries that cannot be stat'ed
// (a dangling symbolic link, or one that leads outside the workspace) are left out, and so are
// those the workspace's Guard refuses to read (by their name, or by what a symbolic link
// leads to): a denied file's name is not listed. At most
// limit entries (default [DefaultLsLimit]) and [tool.MaxBytes] of output. Replay: safe.
func Ls(ws *tool.Workspace) tool.Tool { return &lsTool{ws: ws} }

// lsSchema is the JSON Schema of lsArgs, written out rather than built by reflection at
// start-up; TestSchemasMatchArgs checks it against tool.SchemaFor[lsArgs].
const lsSchema = `{"type":"object","properties":{"path":{"type":"string","description":"Directory to list, relative to the workspace (default: the workspace root)"},"limit":{"type":["null","integer"],"description":"Maximum number of entries to return (default 500)","minimum":1}},"additionalProperties":false}`

func (t *lsTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "ls",
		Description: "List a directory's entries, sorted alphabetically, with a trailing '/' on directories. " +
			"Hidden files are included. Returns at most " + defaultLsLimitText + " entries unless limit says otherwise.",
		Snippet: "List a directory",
		Brief:   "List a directory (default: the root); directories end in '/'; at most limit (" + defaultLsLimitText + ") entries.",
		Schema:  json.RawMessage(lsSchema),
		Replay:  tool.ReplaySafe,
		Local:   true,
	}
}

func (t *lsTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a lsArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	ws := viewFor(t.ws, a.Path, false)
	shown := a.Path
	if shown == "" {
		shown = "."
	}
	rel, err := resolve(ws, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	limit := DefaultLsLimit
	if a.Limit != nil {
		limit = *a.Limit
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
	d, err := ws.Root.Open(rel)
	if err != nil {
		return tool.Result{}, fsError(shown, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return tool.Result{}, fsError(shown, err)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := strings.ToLower(entries[i].Name()), strings.ToLower(entries[j].Name())
		if a != b {
			return a < b
		}
		return entries[i].Name() < entries[j].Name()
	})
	var names []string
	var details LsDetails
	for _, e := range entries {
		if len(names) == limit {
			details.EntryLimitReached = limit
			break
		}
		info, err := ws.Root.Stat(filepath.Join(rel, e.Name()))
		if err != nil || !listable(ws, filepath.Join(rel, e.Name())) {
			continue
		}
		name := e.Name()
		if info.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return tool.TextResult("(empty directory)"), nil
	}
	tr := tool.TruncateHeadLines(names, len(names), tool.MaxBytes)
	text := tr.Content
	var notices []string
	if details.EntryLimitReached > 0 {
		notices = append(notices, fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2))
	}
	if tr.Truncated {
		details.Truncation = &tr
		notices = append(notices, fmt.Sprintf("%s limit reached", tool.FormatSize(tool.MaxBytes)))
	}
	if len(notices) > 0 {
		text += "\n\n[" + strings.Join(notices, ". ") + "]"
	}
	res := tool.TextResult(text)
	if details != (LsDetails{}) {
		res.Details = details
	}
	return res, nil
}
