package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/proc"
)

// editorCommand is the user's editor: $VISUAL, else $EDITOR, else vi, split at spaces
// ("code --wait"); the file is its last argument.
func editorCommand(getenv func(string) string) []string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(getenv(name)); len(f) > 0 {
			return f
		}
	}
	return []string{"vi"}
}

// editorRun runs the editor on the terminal while bubbletea has released it
// (tea.ExecCommand). It goes through the one process runner; the terminal is handed to it
// (proc.Spec.Terminal), since a process in a background group is stopped the moment it
// reads the terminal or sets its modes.
type editorRun struct {
	ctx            context.Context
	argv           []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (r *editorRun) SetStdin(in io.Reader)   { r.stdin = in }
func (r *editorRun) SetStdout(out io.Writer) { r.stdout = out }
func (r *editorRun) SetStderr(out io.Writer) { r.stderr = out }

// Run runs the editor; an error says it did not exit 0.
func (r *editorRun) Run() error {
	s := proc.Spec{Path: r.argv[0], Args: r.argv, Stdin: r.stdin, Stdout: r.stdout, Stderr: r.stderr, KillGroupOnExit: true}
	if f, ok := r.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.Terminal = f
	}
	res := proc.Run(r.ctx, s)
	if res.Outcome != proc.Exited || res.Code != 0 {
		return fmt.Errorf("the editor %s: %s", r.argv[0], res)
	}
	return nil
}

// editedMsg is the editor's end: the file it edited, and why it failed (nil: it exited 0).
type editedMsg struct {
	path string
	err  error
}

// openEditor (Ctrl+G) opens the user's editor on a private temporary file holding the
// editor's text (pastes unfolded); when it exits 0 the file's text replaces the input.
func (m *Model) openEditor() tea.Cmd {
	f, err := os.CreateTemp("", "rein-message-*.md") // mode 0600
	if err != nil {
		m.t.add(newNotice("opening the editor: "+err.Error(), "error"))
		return nil
	}
	_, werr := f.WriteString(m.unfold(m.input.Value()))
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		m.t.add(newNotice("opening the editor: "+err.Error(), "error"))
		return nil
	}
	path := f.Name()
	run := &editorRun{ctx: m.ctx, argv: append(editorCommand(m.getenv), path)}
	return tea.Exec(run, func(err error) tea.Msg { return editedMsg{path: path, err: err} })
}

// edited takes the editor's text into the input; after a failure the input stays as it was.
// The screen is drawn again from scratch: bubbletea resumes its renderer where it was, but
// the editor has moved the cursor, and later relative moves would land off by as much.
func (m *Model) edited(e editedMsg) tea.Cmd {
	data, err := os.ReadFile(e.path)
	_ = os.Remove(e.path)
	switch {
	case e.err != nil:
		m.t.add(newNotice(e.err.Error()+": the input is kept as it was", "warn"))
	case err != nil:
		m.t.add(newNotice("reading what the editor wrote: "+err.Error(), "error"))
	default:
		m.input.SetValue(strings.TrimRight(string(data), "\n"))
	}
	return tea.ClearScreen
}
