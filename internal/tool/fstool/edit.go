package fstool

import (
	"github.com/reinhq/rein/internal/strictjson"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"syscall"

	"github.com/reinhq/rein/internal/linediff"
	"github.com/reinhq/rein/internal/tool"
)

// Replacement is one entry of an edit call's edits.
type Replacement struct {
	OldText string `json:"oldText" jsonschema:"Exact text to replace; must occur exactly once in the original file"`
	NewText string `json:"newText" jsonschema:"Text to put in its place"`
}

type editArgs struct {
	Path  string        `json:"path" jsonschema:"Path of the file to edit, relative to the workspace (or absolute inside it)"`
	Edits []Replacement `json:"edits" jsonschema:"Replacements, each matched against the original file content (not against the result of earlier edits); they must not overlap"`
}

// EditDetails is the Details of an edit result.
type EditDetails struct {
	// Diff is a unified diff of the change (line endings shown as LF, no BOM).
	Diff string `json:"diff"`
	// FirstChangedLine is the 1-based line number of the first changed line.
	FirstChangedLine int `json:"firstChangedLine"`
	// FuzzyEdits lists the indexes of the edits that were located by fuzzy matching.
	FuzzyEdits []int `json:"fuzzyEdits,omitempty"`
}

// DiffContextLines is the number of unchanged lines around each hunk of [EditDetails.Diff].
const DiffContextLines = 4

type editTool struct{ ws *tool.Workspace }

// Edit returns the edit tool. Every edit's oldText is located in the original file content
// (edits do not see each other's results): an exact match must be unique; an edit with no
// exact match falls back to fuzzy matching (see below), which must be unique too. Edits must
// not overlap, oldText must not be empty, and an edit that changes nothing is an error. A
// byte-order mark and the file's line ending (CRLF when the first line ends with CRLF) are
// kept: matching is done on the text with CRLF turned into LF, and LF is turned back into
// CRLF on write, so a file that mixes both is written with CRLF throughout.
//
// Fuzzy matching is a reported fallback: it ignores trailing blanks at line ends and treats
// typographic quotes, dashes and special spaces as their ASCII forms, while the replacement
// still covers exactly the original bytes matched (the rest of the file is not normalized).
// The result text names every edit located this way, and [EditDetails.FuzzyEdits] lists them.
//
// The tool implements [tool.Preparer]: before validation it accepts edits sent as a JSON
// string holding the array, and folds legacy top-level oldText/newText into edits.
// Writes and edits of the same path are serialized. Replay: never.
func Edit(ws *tool.Workspace) tool.Tool { return &editTool{ws: ws} }

// editSchema is the JSON Schema of editArgs, written out rather than built by reflection at
// start-up; TestSchemasMatchArgs checks it against tool.SchemaFor[editArgs].
const editSchema = `{"type":"object","properties":{"path":{"type":"string","description":"Path of the file to edit, relative to the workspace (or absolute inside it)"},"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Exact text to replace; must occur exactly once in the original file"},"newText":{"type":"string","description":"Text to put in its place"}},"required":["oldText","newText"],"additionalProperties":false},"description":"Replacements, each matched against the original file content (not against the result of earlier edits); they must not overlap","minItems":1}},"required":["path","edits"],"additionalProperties":false}`

func (t *editTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "edit",
		Description: "Edit a file by replacing exact text. Each edits[i].oldText must match the file exactly " +
			"(including whitespace and indentation) and occur exactly once; include enough surrounding lines to make it unique. " +
			"All edits are matched against the original file, not against the result of earlier edits, and must not overlap: " +
			"to change nearby lines, use one edit covering them. Several separate changes to one file go in one call. " +
			"Use write to create a file or replace it entirely.",
		Snippet: "Replace exact text in a file (one or more non-overlapping edits)",
		Schema:  json.RawMessage(editSchema),
		Replay:  tool.ReplayNever,
	}
}

// PrepareArgs implements [tool.Preparer].
func (t *editTool) PrepareArgs(args map[string]any) (bool, error) {
	changed := false
	if s, ok := args["edits"].(string); ok {
		v, err := strictjson.Decode(strings.TrimSpace(s))
		if err != nil {
			return false, fmt.Errorf("edits was sent as a string that is not a JSON array of {oldText, newText} objects (%w); send it as an array", err)
		}
		args["edits"] = v
		changed = true
	}
	oldText, hasOld := args["oldText"]
	newText, hasNew := args["newText"]
	if hasOld || hasNew {
		legacy := map[string]any{}
		if hasOld {
			legacy["oldText"] = oldText
		}
		if hasNew {
			legacy["newText"] = newText
		}
		delete(args, "oldText")
		delete(args, "newText")
		switch e := args["edits"].(type) {
		case nil:
			args["edits"] = []any{legacy}
		case []any:
			args["edits"] = append(e, legacy)
		default:
			return false, fmt.Errorf("edits must be an array; got both edits and top-level oldText/newText")
		}
		changed = true
	}
	return changed, nil
}

const bom = "\uFEFF"

type editMatch struct {
	idx        int // index in edits
	start, end int // in the LF-normalized original
	newText    string
	fuzzy      bool
}

func (t *editTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a editArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	ws := viewFor(t.ws, a.Path, false)
	if len(a.Edits) == 0 {
		return tool.Result{}, errors.New("edits is empty; give at least one {oldText, newText}")
	}
	rel, target, unlock, err := lockedTarget(ctx, ws, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer unlock()

	if err := checkFile(ws, target, a.Path); err != nil {
		if errors.Is(err, errNotFound) {
			return tool.Result{}, fmt.Errorf("Could not edit file: %s. Error code: ENOENT. Use write to create a new file.", a.Path)
		}
		return tool.Result{}, err
	}
	// The result shows lines of the file (its diff), so edit reads it too.
	if err := guardRead(ws, target, rel, 0); err != nil {
		return tool.Result{}, err
	}
	raw, err := ws.Root.ReadFile(target)
	if err != nil {
		return tool.Result{}, editFileError(a.Path, err)
	}
	out, details, err := applyEdits(string(raw), a.Path, a.Edits)
	if err != nil {
		return tool.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := writeRegular(ws, target, a.Path, []byte(out)); err != nil {
		return tool.Result{}, err
	}
	text := fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(a.Edits), a.Path)
	if len(details.FuzzyEdits) > 0 {
		names := make([]string, len(details.FuzzyEdits))
		for i, k := range details.FuzzyEdits {
			names[i] = fmt.Sprintf("edits[%d]", k)
		}
		text += fmt.Sprintf("\nNote: %s had no exact match and %s applied with fuzzy matching "+
			"(trailing whitespace, quote, dash and space variants ignored). Read the changed lines if exact content matters.",
			strings.Join(names, ", "), map[bool]string{true: "was", false: "were"}[len(names) == 1])
	}
	res := tool.TextResult(text)
	res.Details = details
	return res, nil
}

func editFileError(path string, err error) error {
	if e := fsError(path, err); errors.Is(e, tool.ErrOutsideWorkspace) {
		return e
	}
	code := "EIO"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = "ENOENT"
	case errors.Is(err, fs.ErrPermission):
		code = "EACCES"
	case errors.Is(err, syscall.EISDIR):
		code = "EISDIR"
	case errors.Is(err, syscall.ENOTDIR):
		code = "ENOTDIR"
	}
	msg := fmt.Sprintf("Could not edit file: %s. Error code: %s.", path, code)
	if code == "ENOENT" {
		msg += " Use write to create a new file."
	}
	return fmt.Errorf("%s (%w)", msg, err)
}

// applyEdits applies edits to content (the file's bytes) and returns the bytes to write.
func applyEdits(content, path string, edits []Replacement) (string, EditDetails, error) {
	hasBOM := strings.HasPrefix(content, bom)
	content = strings.TrimPrefix(content, bom)
	crlf := false
	if i := strings.IndexByte(content, '\n'); i > 0 && content[i-1] == '\r' {
		crlf = true
	}
	text := strings.ReplaceAll(content, "\r\n", "\n")

	multi := len(edits) > 1
	var fz *fuzzyText
	matches := make([]editMatch, 0, len(edits))
	for i, e := range edits {
		old := strings.ReplaceAll(e.OldText, "\r\n", "\n")
		repl := strings.ReplaceAll(e.NewText, "\r\n", "\n")
		if old == "" {
			if multi {
				return "", EditDetails{}, fmt.Errorf("edits[%d].oldText is empty in %s. Give the exact text to replace (use write to create or overwrite a whole file).", i, path)
			}
			return "", EditDetails{}, fmt.Errorf("oldText is empty in %s. Give the exact text to replace (use write to create or overwrite a whole file).", path)
		}
		n := strings.Count(text, old)
		if n == 1 {
			s := strings.Index(text, old)
			matches = append(matches, editMatch{idx: i, start: s, end: s + len(old), newText: repl})
			continue
		}
		if n == 0 {
			if fz == nil {
				f := fuzzyNormalize(text)
				fz = &f
			}
			fold := fuzzyNormalize(old).s
			if fold != "" {
				n = strings.Count(fz.s, fold)
			}
			if n == 1 {
				a := strings.Index(fz.s, fold)
				s, end := fz.span(a, a+len(fold))
				matches = append(matches, editMatch{idx: i, start: s, end: end, newText: repl, fuzzy: true})
				continue
			}
		}
		if n == 0 {
			if multi {
				return "", EditDetails{}, fmt.Errorf("Could not find edits[%d] in %s. The oldText must match exactly including all whitespace and newlines.", i, path)
			}
			return "", EditDetails{}, fmt.Errorf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", path)
		}
		if multi {
			return "", EditDetails{}, fmt.Errorf("Found %d occurrences of edits[%d] in %s. Each oldText must be unique. Please provide more context to make it unique.", n, i, path)
		}
		return "", EditDetails{}, fmt.Errorf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", n, path)
	}

	sorted := slices.Clone(matches)
	slices.SortStableFunc(sorted, func(x, y editMatch) int { return x.start - y.start })
	for k := 1; k < len(sorted); k++ {
		if p, c := sorted[k-1], sorted[k]; p.end > c.start {
			i, j := min(p.idx, c.idx), max(p.idx, c.idx)
			return "", EditDetails{}, fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit or target disjoint regions.", i, j, path)
		}
	}
	var b strings.Builder
	b.Grow(len(text))
	prev := 0
	for _, m := range sorted {
		b.WriteString(text[prev:m.start])
		b.WriteString(m.newText)
		prev = m.end
	}
	b.WriteString(text[prev:])
	result := b.String()
	if result == text {
		return "", EditDetails{}, fmt.Errorf("No changes made to %s. The replacement produced identical content. "+
			"This might indicate an issue with special characters or the text not existing as expected.", path)
	}

	var d EditDetails
	for _, m := range matches {
		if m.fuzzy {
			d.FuzzyEdits = append(d.FuzzyEdits, m.idx)
		}
	}
	lineEdits := diffRegions(text, sorted)
	if len(lineEdits) > 0 {
		d.FirstChangedLine = strings.Count(text[:lineEdits[0].Start], "\n") + 1
		d.Diff, _ = linediff.Unified(path, path, text, lineEdits, DiffContextLines) // edits from Lines are valid
	}

	if crlf {
		result = strings.ReplaceAll(result, "\n", "\r\n")
	}
	if hasBOM {
		result = bom + result
	}
	return result, d, nil
}

// diffRegions returns line edits turning text into the result of applying sorted (matches
// ordered by position, not overlapping). Only the lines the matches touch are diffed, so the
// cost follows the size of the change, not of the file.
func diffRegions(text string, sorted []editMatch) []linediff.Edit {
	lineStart := func(i int) int { return strings.LastIndexByte(text[:i], '\n') + 1 }
	lineEnd := func(m editMatch) int {
		if m.end > m.start && text[m.end-1] == '\n' {
			return m.end
		}
		if j := strings.IndexByte(text[m.end:], '\n'); j >= 0 {
			return m.end + j + 1
		}
		return len(text)
	}
	var out []linediff.Edit
	for k := 0; k < len(sorted); {
		// Group the matches whose lines touch.
		ls, le := lineStart(sorted[k].start), lineEnd(sorted[k])
		g := k + 1
		for g < len(sorted) && lineStart(sorted[g].start) < le {
			le = max(le, lineEnd(sorted[g]))
			g++
		}
		var b strings.Builder
		prev := ls
		for _, m := range sorted[k:g] {
			b.WriteString(text[prev:m.start])
			b.WriteString(m.newText)
			prev = m.end
		}
		b.WriteString(text[prev:le])
		for _, e := range linediff.Lines(text[ls:le], b.String()) {
			e.Start += ls
			e.End += ls
			out = append(out, e)
		}
		k = g
	}
	return out
}
