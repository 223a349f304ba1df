package fstool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/reinhq/rein/internal/tool"
)

type writeArgs struct {
	Path    string `json:"path" jsonschema:"Path of the file to write, relative to the workspace (or absolute inside it)"`
	Content string `json:"content" jsonschema:"The complete new content of the file"`
}

// WriteDetails is the Details of a write result.
type WriteDetails struct {
	// Path is the file's path relative to the workspace.
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	// Created is true when the file did not exist before.
	Created bool `json:"created"`
}

type writeTool struct{ ws *tool.Workspace }

// Write returns the write tool: it creates or overwrites a file with the given content,
// creating missing parent directories inside the workspace. An existing file is rewritten in
// place (its mode is kept). Protected paths ([tool.Workspace.Protected]), also reached
// through a symbolic link, and files with more than one hard link are refused (see the
// package documentation). Writes and edits of the same file are serialized. Replay: never.
func Write(ws *tool.Workspace) tool.Tool { return &writeTool{ws: ws} }

// writeSchema is the JSON Schema of writeArgs, written out rather than built by reflection at
// start-up; TestSchemasMatchArgs checks it against tool.SchemaFor[writeArgs].
const writeSchema = `{"type":"object","properties":{"path":{"type":"string","description":"Path of the file to write, relative to the workspace (or absolute inside it)"},"content":{"type":"string","description":"The complete new content of the file"}},"required":["path","content"],"additionalProperties":false}`

func (t *writeTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "write",
		Description: "Write content to a file, creating it if it does not exist and replacing it entirely if it does. " +
			"Missing parent directories are created. Use it for new files or complete rewrites; to change part of a file, use edit.",
		Snippet: "Create or overwrite a file",
		Schema:  json.RawMessage(writeSchema),
		Replay:  tool.ReplayNever,
	}
}

func (t *writeTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a writeArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	ws := viewFor(t.ws, a.Path, false)
	rel, target, unlock, err := lockedTarget(ctx, ws, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer unlock()

	created := false
	if st, err := ws.Root.Stat(target); err == nil {
		if st.IsDir() {
			return tool.Result{}, fmt.Errorf("%s is a directory; give a file path", a.Path)
		}
		if !st.Mode().IsRegular() {
			return tool.Result{}, fmt.Errorf("%s is not a regular file (%s); the file tools only handle regular files", a.Path, st.Mode().Type())
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	if dir := filepath.Dir(target); dir != "." {
		if err := ws.Root.MkdirAll(dir, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
				return tool.Result{}, fmt.Errorf("%s: cannot create directory %s: a component of the path is a file, not a directory", a.Path, filepath.ToSlash(dir))
			}
			return tool.Result{}, fsError(a.Path, err)
		}
	}
	if err := writeRegular(ws, target, a.Path, []byte(a.Content)); err != nil {
		return tool.Result{}, err
	}
	res := tool.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(a.Content), a.Path))
	res.Details = WriteDetails{Path: rel, Bytes: len(a.Content), Created: created}
	return res, nil
}

// lockedTarget resolves path (from the model) to its workspace-relative form and the file a write or edit changes, refusing the
// workspace itself and anything writeTarget refuses, and takes that file's per-path lock.
func lockedTarget(ctx context.Context, ws *tool.Workspace, path string) (rel, target string, unlock func(), err error) {
	if rel, err = resolve(ws, path); err != nil {
		return "", "", nil, err
	}
	if rel == "." {
		return "", "", nil, fmt.Errorf("%q is the workspace directory itself; give a file path", path)
	}
	if target, err = writeTarget(ws, rel, path); err != nil {
		return "", "", nil, err
	}
	if unlock, err = lockPath(ctx, lockKey(ws, target)); err != nil {
		return "", "", nil, err
	}
	return rel, target, unlock, nil
}
