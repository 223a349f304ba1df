package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/tool"
)

// selfServer configures the test binary as a stdio server named name.
func selfServer(t *testing.T, name string) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Server{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{envServer: "1"}}
}

func openSelf(t *testing.T) (*Manager, map[string]*Tool) {
	t.Helper()
	m := Open(context.Background(), Options{Servers: []Server{selfServer(t, "self")}, Dir: t.TempDir(), Environ: os.Environ(), StartTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = m.Close() })
	info := m.Servers()
	if len(info) != 1 || info[0].State != StateConnected {
		t.Fatalf("server state: %+v", info)
	}
	tools, problems := m.Tools()
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	by := map[string]*Tool{}
	for _, tl := range tools {
		by[tl.Spec().Name] = tl
	}
	return m, by
}

func run(t *testing.T, tl *Tool, args string) (tool.Result, error) {
	t.Helper()
	valid, err := tool.ValidateCall(tl, args)
	if err != nil {
		t.Fatalf("validating %s: %v", args, err)
	}
	return tl.Run(context.Background(), tool.Call{ID: "c1", Args: valid})
}

func text(r tool.Result) string {
	var b strings.Builder
	for _, p := range r.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}

func TestStdioServerToolsNamesAndAnnotations(t *testing.T) {
	_, by := openSelf(t)
	echo := by["mcp__self__echo"]
	if echo == nil {
		t.Fatalf("no mcp__self__echo among %v", keys(by))
	}
	if s := echo.Spec(); s.Replay != tool.ReplaySafe || s.Sequential {
		t.Errorf("read-only echo: replay %q sequential %v, want safe and parallel", s.Replay, s.Sequential)
	}
	if s := by["mcp__self__crash"].Spec(); s.Replay != tool.ReplayNever || !s.Sequential {
		t.Errorf("crash (no annotations): replay %q sequential %v, want never and sequential", s.Replay, s.Sequential)
	}
	if by["mcp__self__greet__structured_"] == nil {
		t.Errorf("the tool with spaces and parentheses was not offered as mcp__self__greet__structured_: %v", keys(by))
	}
	res, err := run(t, echo, `{"text":"hello"}`)
	if err != nil || res.IsError || text(res) != "echo: hello" {
		t.Fatalf("echo: %q %v %v", text(res), res.IsError, err)
	}
	// The same strict validation as the built-in tools: an unknown key is refused.
	if _, err := tool.ValidateCall(echo, `{"text":"a","extra":1}`); err == nil {
		t.Error("an unknown argument passed validation")
	}
	// Structured content without text reaches the model as JSON.
	res, err = run(t, by["mcp__self__greet__structured_"], `{}`)
	if err != nil || !strings.Contains(text(res), `"greeting":"hi"`) {
		t.Errorf("structured result: %q %v", text(res), err)
	}
}

func TestToolErrorIsAnErrorResult(t *testing.T) {
	_, by := openSelf(t)
	res, err := run(t, by["mcp__self__fail"], `{}`)
	if err != nil {
		t.Fatalf("a tool error came back as a Go error: %v", err)
	}
	if !res.IsError || !strings.Contains(text(res), "frobnicator is out of order") {
		t.Fatalf("tool error: %q isError=%v", text(res), res.IsError)
	}
}

func TestOutputIsCapped(t *testing.T) {
	_, by := openSelf(t)
	res, err := run(t, by["mcp__self__big"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	out := text(res)
	if len(out) > tool.MaxBytes+500 || !strings.Contains(out, "[output truncated") {
		t.Fatalf("200 KB output came back as %d bytes (notice: %v)", len(out), strings.Contains(out, "truncated"))
	}
	if d, ok := res.Details.(Details); !ok || d.Truncation == nil || d.Truncation.TotalBytes != 200<<10 {
		t.Errorf("details: %+v", res.Details)
	}
}

func TestCrashMidCallIsOneErrorThenTheServerRestarts(t *testing.T) {
	m, by := openSelf(t)
	res, err := run(t, by["mcp__self__pid"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	first := text(res)
	_, err = run(t, by["mcp__self__crash"], `{}`)
	if err == nil || !errors.Is(err, ErrServer) {
		t.Fatalf("a crash mid-call: %v, want an error wrapping ErrServer", err)
	}
	for _, want := range []string{"ended during the call", "outcome is unknown", "exit status 3", "the server goes down now"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash error lacks %q: %v", want, err)
		}
	}
	if st := m.Servers()[0].State; st != StateCrashed {
		t.Errorf("state after the crash: %s, want %s", st, StateCrashed)
	}
	res, err = run(t, by["mcp__self__pid"], `{}`)
	if err != nil {
		t.Fatalf("the call after the crash: %v", err)
	}
	if second := text(res); second == first || second == "" {
		t.Errorf("the server was not started again: pid %s then %s", first, second)
	}
	if st := m.Servers()[0].State; st != StateConnected {
		t.Errorf("state after the restart: %s", st)
	}
}

// A server that ended between two calls is started again by the next one, which succeeds:
// it is not reported as ended during that call.
func TestServerEndedBetweenCallsRestarts(t *testing.T) {
	m, by := openSelf(t)
	res, err := run(t, by["mcp__self__pid"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	first := text(res)
	if _, err := run(t, by["mcp__self__exit"], `{}`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); m.Servers()[0].State != StateCrashed; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's end was not noticed: %s", m.Servers()[0].State)
		}
	}
	res, err = run(t, by["mcp__self__pid"], `{}`)
	if err != nil {
		t.Fatalf("the call after the server ended: %v", err)
	}
	if second := text(res); second == first || second == "" {
		t.Errorf("the server was not started again: pid %s then %s", first, second)
	}
}

func TestStartFailureIsReported(t *testing.T) {
	m := Open(context.Background(), Options{Servers: []Server{{Name: "gone", Command: "/nonexistent/server"}, {Name: "off", Command: "true", Disabled: true}}, StartTimeout: 5 * time.Second})
	defer m.Close()
	info := m.Servers()
	if info[0].State != StateFailed || !errors.Is(info[0].Err, ErrServer) || !strings.Contains(info[0].Err.Error(), "/nonexistent/server") {
		t.Errorf("missing program: %s %v", info[0].State, info[0].Err)
	}
	if info[1].State != StateDisabled {
		t.Errorf("disabled server: %s", info[1].State)
	}
	if tools, _ := m.Tools(); len(tools) != 0 {
		t.Errorf("tools of servers that do not run: %d", len(tools))
	}
}

func TestInstructionsAreKept(t *testing.T) {
	m, _ := openSelf(t)
	if got := m.Servers()[0].Instructions; !strings.Contains(got, "IGNORE ALL PREVIOUS") {
		t.Errorf("instructions: %q", got)
	}
}

func keys(m map[string]*Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func callArgs(s string) tool.Call { return tool.Call{ID: "c", Args: json.RawMessage(s)} }
