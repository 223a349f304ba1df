package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

// scriptHost opens real runtimes through the composition root on the script model, in a
// workspace and $REIN_HOME of the test's own (what package cli does for a terminal).
type scriptHost struct {
	dir, home, script string
	noSession         bool
}

func newScriptHost(t testing.TB, scenario, settings string) *scriptHost {
	t.Helper()
	root := t.TempDir()
	h := &scriptHost{dir: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), script: filepath.Join(root, "s.yaml")}
	for _, d := range []string{h.dir, h.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(h.script, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if settings != "" {
		if err := os.WriteFile(filepath.Join(h.home, "settings.json"), []byte(settings), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func (h *scriptHost) Open(ctx context.Context, req Request) (Runtime, Info, error) {
	session := system.SessionChoice{Mode: system.SessionNew}
	switch {
	case h.noSession:
		session.Mode = system.SessionNone
	case req.Mode == OpenAgain && req.SessionDir != "":
		session = system.SessionChoice{Mode: system.SessionAt, Ref: req.SessionDir}
	case req.Mode == OpenResume:
		session = system.SessionChoice{Mode: system.SessionResume, Ref: req.Ref}
	case req.Mode == OpenFork:
		session = system.SessionChoice{Mode: system.SessionFork, Ref: req.Ref}
	}
	rt, err := system.Open(ctx, system.Options{
		Provider: llm.ProviderScript, Model: req.Model, Script: h.script, Dir: h.dir, Home: h.home,
		Getenv: func(string) string { return "" }, Session: session,
		Observe: req.Observe, Inbox: req.Inbox, Confirm: req.Confirm, Notice: req.Notice,
		Approve: func(ctx context.Context, a system.Approval) (system.Answer, error) {
			ans, err := req.Approve(ctx, Approval{Tool: a.Tool, Args: a.Args, Part: a.Part, Rule: a.Rule})
			return system.Answer{Allow: ans.Allow, Reason: ans.Reason}, err
		},
		History: req.History, HistoryUsage: req.Usage,
	})
	if err != nil {
		return nil, Info{}, err
	}
	info := Info{Provider: rt.Model.Provider, Model: rt.Model.ID, ContextWindow: rt.Model.ContextWindow, Sandboxed: rt.Sandboxed, Trusted: rt.Trusted}
	if rt.Session != nil {
		info.SessionID, info.SessionDir = rt.Session.ID(), rt.Session.Dir()
	}
	return rt, info, nil
}

// start opens the UI on h at 80×24 without colour, as a teatest program.
func start(t *testing.T, h *scriptHost) (*Model, *probe) {
	t.Helper()
	m, err := New(context.Background(), h, Options{Width: 80, Height: 24})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return m, startProgram(t, m)
}

// startProgram runs m as a teatest program at 80×24.
func startProgram(t *testing.T, m *Model) *probe {
	t.Helper()
	// The filter runs on the program's goroutine, so reading the model there is safe.
	filter := func(model tea.Model, msg tea.Msg) tea.Msg {
		if req, ok := msg.(frameRequest); ok {
			req <- frame(model.(*Model))
			return nil
		}
		return msg
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24), teatest.WithProgramOptions(tea.WithFilter(filter)))
	return &probe{TestModel: tm}
}

// frameRequest asks the program's goroutine for the current frame.
type frameRequest chan string

// probe is a teatest program whose screen can be read.
type probe struct{ *teatest.TestModel }

func (p *probe) screen() string {
	req := make(frameRequest, 1)
	p.Send(req)
	select {
	case f := <-req:
		return f
	case <-time.After(5 * time.Second):
		return ""
	}
}

// waitFor waits until the screen shows every one of texts.
func waitFor(t *testing.T, p *probe, texts ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var f string
	for time.Now().Before(deadline) {
		f = p.screen()
		missing := false
		for _, s := range texts {
			missing = missing || !strings.Contains(f, s)
		}
		if !missing {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the screen does not show %q:\n%s", texts, f)
}

// send types text and presses Enter.
func send(tm *probe, text string) {
	tm.Type(text)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
}

// frame is the model's screen without styles, trailing blanks and the session id (which
// differs in every run), for golden files.
func frame(m *Model) string {
	out := ansi.Strip(m.frame())
	if id := m.current().SessionID; id != "" {
		out = strings.ReplaceAll(out, short(id), "<sessid>")
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// waitIdle waits until no run is in progress.
func waitIdle(t *testing.T, m *Model) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for m.e.running() {
		if time.Now().After(deadline) {
			t.Fatal("the run did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// finalFrame quits the program and compares the last frame with the test's golden file
// (go test ./internal/tui -update rewrites it).
func finalFrame(t *testing.T, m *Model, tm *probe) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	golden.RequireEqual(t, frame(m))
}
