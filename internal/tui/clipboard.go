package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/proc"
)

// Ctrl+V reads the system clipboard with the first of these programs found on $PATH
// (wl-paste only under Wayland), looked up at the key press, not before: a rein that is
// never asked to paste looks for none. The terminal's own paste needs none of them: it
// arrives as a bracketed paste.
var clipboardReaders = [][]string{
	{"wl-paste", "--no-newline"},
	{"xclip", "-out", "-selection", "clipboard"},
	{"xsel", "--output", "--clipboard"},
	{"pbpaste"},
	{"termux-clipboard-get"},
	{"powershell.exe", "-NoProfile", "-Command", "Get-Clipboard"},
}

// clipboardLimit bounds what Ctrl+V takes; clipboardTimeout how long the reader may run.
const (
	clipboardLimit   = 16 << 20
	clipboardTimeout = 5 * time.Second
)

// errNoClipboard: no clipboard reader is installed.
var errNoClipboard = errors.New("no clipboard reader on $PATH (wl-paste, xclip, xsel, pbpaste, termux-clipboard-get, powershell.exe): install one, or paste with the terminal's own paste key")

// clipboardMsg is what the clipboard held, or why it could not be read.
type clipboardMsg struct {
	text string
	err  error
}

// clipboardReader is the argument vector of the first clipboard reader installed.
func clipboardReader(getenv func(string) string) ([]string, error) {
	for _, argv := range clipboardReaders {
		if argv[0] == "wl-paste" && getenv("WAYLAND_DISPLAY") == "" {
			continue
		}
		if p, err := exec.LookPath(argv[0]); err == nil {
			return append([]string{p}, argv[1:]...), nil
		}
	}
	return nil, errNoClipboard
}

// readClipboard (Ctrl+V) reads the clipboard through the one process runner, off the UI
// goroutine; its text arrives as a clipboardMsg.
func (m *Model) readClipboard() tea.Cmd {
	ctx, getenv := m.ctx, m.getenv
	return func() tea.Msg {
		text, err := readClipboard(ctx, getenv)
		return clipboardMsg{text: text, err: err}
	}
}

func readClipboard(ctx context.Context, getenv func(string) string) (string, error) {
	argv, err := clipboardReader(getenv)
	if err != nil {
		return "", err
	}
	out := &capped{limit: clipboardLimit}
	stderr := proc.NewTail(4 << 10) // for the message: the end of what it said
	res := proc.Run(ctx, proc.Spec{Path: argv[0], Args: argv, Stdout: out, Stderr: stderr, Timeout: clipboardTimeout, KillGroupOnExit: true})
	switch {
	case res.Err != nil:
		return "", fmt.Errorf("reading the clipboard with %s: %w", argv[0], res.Err)
	case out.over:
		return "", fmt.Errorf("the clipboard holds more than %s: paste it with the terminal's own paste key", size(clipboardLimit))
	case res.Outcome != proc.Exited || res.Code != 0:
		return "", fmt.Errorf("reading the clipboard with %s: %s %s", argv[0], res, bytes.TrimSpace(stderr.Bytes()))
	}
	return out.buf.String(), nil
}

// pasteClipboard puts what Ctrl+V read into the editor as a paste (a long one collapsed).
func (m *Model) pasteClipboard(c clipboardMsg) {
	if c.err != nil {
		m.t.add(newNotice("Ctrl+V: "+c.err.Error(), "warn"))
		return
	}
	m.paste(c.text)
}

// capped keeps the first limit bytes written to it and notes that more came.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
