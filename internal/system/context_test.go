package system

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
)

var fixedNow = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// captureServer answers every request with a terminal 400 and keeps the bodies it received.
func captureServer(t *testing.T) (*httptest.Server, func() [][]byte) {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"captured"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), bodies...)
	}
}

// strings collects every string value of a decoded JSON document.
func jsonStrings(v any, out map[string]bool) {
	switch v := v.(type) {
	case string:
		out[v] = true
	case []any:
		for _, e := range v {
			jsonStrings(e, out)
		}
	case map[string]any:
		for _, e := range v {
			jsonStrings(e, out)
		}
	}
}

// TestRunSendsWhatInspectShows runs the first request of a run on each network provider
// against a test server and checks that the body carries exactly the system prompt and tools
// Inspect reports (one code path: assemble). It logs the bytes of the default first request
// for prompt "hi" with all seven tools, rein's provider-neutral encoding and each wire body.
func TestRunSendsWhatInspectShows(t *testing.T) {
	bare, dir, home := realDir(t), realDir(t), t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Run the tests.\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, ".rein", "skills", "go-test"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".rein", "skills", "go-test", "SKILL.md"), []byte("---\nname: go-test\ndescription: Run Go tests.\n---\n"), 0o644))
	for _, provider := range []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat} {
		t.Run(provider+"/default", func(t *testing.T) {
			srv, bodies := captureServer(t)
			o := Options{Provider: provider, APIKey: "k", BaseURL: srv.URL, Model: "qwen", Dir: bare, Home: home, Getenv: env(nil),
				HTTPClient: srv.Client(), Now: fixedNow, Session: SessionChoice{Mode: SessionNone}}
			if provider != llm.ProviderOpenAICompat {
				o.Model = ""
			}
			o.Retry = llm.DefaultRetryPolicy
			o.Retry.MaxAttempts = 1
			c, err := Inspect(o, "hi")
			if err != nil {
				t.Fatal(err)
			}
			rt, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			_, _ = rt.Agent.Run(context.Background(), nil, llm.UserText("hi"))
			got := bodies()
			if len(got) != 1 || !strings.Contains(string(got[0]), "Current working directory: ") {
				t.Fatalf("%d requests", len(got))
			}
			t.Logf("default first request, prompt %q, 7 tools, no context files: %s %s wire body %d bytes; llm.Request %d bytes; ~%d tokens (%s)",
				"hi", provider, c.Model, len(got[0]), c.RequestBytes, c.Tokens, c.Estimator)
		})
		t.Run(provider, func(t *testing.T) {
			srv, bodies := captureServer(t)
			o := Options{Provider: provider, APIKey: "k", BaseURL: srv.URL, Dir: dir, Home: home, Getenv: env(nil),
				HTTPClient: srv.Client(), Now: fixedNow, Session: SessionChoice{Mode: SessionNone}, Trust: TrustOnce}
			o.Retry = llm.DefaultRetryPolicy
			o.Retry.MaxAttempts = 1
			if provider == llm.ProviderOpenAICompat {
				o.Model = "qwen"
			}
			c, err := Inspect(o, "hi")
			if err != nil {
				t.Fatal(err)
			}
			rt, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if rt.System.Prompt != c.System.Prompt {
				t.Fatalf("Build and Inspect assemble different prompts")
			}
			_, _ = rt.Agent.Run(context.Background(), nil, llm.UserText("hi"))
			got := bodies()
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			var doc any
			if err := json.Unmarshal(got[0], &doc); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			jsonStrings(doc, seen)
			if !seen[c.System.Prompt] {
				t.Errorf("the body does not carry the inspected system prompt:\n%s", got[0])
			}
			if !strings.Contains(c.System.Prompt, "Run the tests.") || !strings.Contains(c.System.Prompt, "- go-test: Run Go tests.") {
				t.Errorf("the prompt lacks the context file or the skill:\n%s", c.System.Prompt)
			}
			if len(c.Tools) != 7 {
				t.Errorf("%d tools, want 7", len(c.Tools))
			}
			for _, tl := range c.Tools {
				if !seen[tl.Name] || !seen[tl.Description] {
					t.Errorf("the body lacks tool %s", tl.Name)
				}
			}
			if !seen["hi"] {
				t.Error("the body lacks the prompt")
			}
			t.Logf("first request, prompt %q, 7 tools: %s wire body %d bytes; provider-neutral llm.Request %d bytes; sections %d bytes, ~%d tokens (%s)",
				"hi", provider, len(got[0]), c.RequestBytes, c.Bytes, c.Tokens, c.Estimator)
		})
	}
}

// TestDefaultFirstRequestBytes reports the size of the default first request (no context
// files, no skills, all seven tools, prompt "hi") in rein's provider-neutral encoding.
func TestDefaultFirstRequestBytes(t *testing.T) {
	dir, home := realDir(t), t.TempDir()
	c, err := Inspect(Options{Provider: llm.ProviderOpenAI, Dir: dir, Home: home, Getenv: env(nil), Now: fixedNow,
		Session: SessionChoice{Mode: SessionNone}}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	var system, tools int
	for _, s := range c.Sections {
		switch s.Name {
		case "tool":
			tools += s.Bytes
		case "prompt", "message":
		default:
			system += s.Bytes
		}
	}
	if len(c.Tools) != 7 || c.RequestBytes == 0 || c.Estimator != "o200k_base" {
		t.Fatalf("tools %d, request %d bytes, estimator %s", len(c.Tools), c.RequestBytes, c.Estimator)
	}
	t.Logf("default first request (gpt-5, prompt \"hi\", 7 tools): llm.Request JSON %d bytes; system prompt %d bytes, tool schemas %d bytes; ~%d tokens (o200k_base)",
		c.RequestBytes, system, tools, c.Tokens)
}

// TestInspectSession: continuing a session shows its messages and the provider's reported
// usage, without locking or changing the ledger.
func TestInspectSession(t *testing.T) {
	dir, home := realDir(t), t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	must(t, os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: Hello there.\n    usage: {input: 100, output: 5}\n"), 0o644))
	o := Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Now: fixedNow}
	rt, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Agent.Run(context.Background(), nil, llm.UserText("hello")); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(rt.Session.Dir(), "ledger.jsonl")
	must(t, rt.Close())
	before, _ := os.ReadFile(ledger)

	c, err := Inspect(Options{Dir: dir, Home: home, Getenv: env(nil), Now: fixedNow, Session: SessionChoice{Mode: SessionContinue}}, "again")
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "script" || c.Session == "" || len(c.History) != 2 || c.Prompt == nil {
		t.Fatalf("provider %q session %q history %d prompt %v", c.Provider, c.Session, len(c.History), c.Prompt)
	}
	var names []string
	for _, s := range c.Sections[len(c.Sections)-3:] {
		names = append(names, s.Name+":"+s.Source)
	}
	if strings.Join(names, " ") != "message:user message:assistant prompt:user" {
		t.Errorf("last sections %v", names)
	}
	if want := 105 + (len("again")+3)/4; c.Reported != want {
		t.Errorf("reported %d, want %d (usage 105 + the prompt's estimate)", c.Reported, want)
	}
	after, _ := os.ReadFile(ledger)
	if string(before) != string(after) {
		t.Error("Inspect changed the ledger")
	}
}

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSessionContextMatchesSession: the read-only context Inspect shows for a session equals
// what an opened session gives the kernel, a compaction included.
func TestSessionContextMatchesSession(t *testing.T) {
	const scenario = `
version: 1
dialogs:
  - match: "<conversation>"
    turns: [{text: "## Goal\nwrite notes"}]
  - match: "compacted into the following summary"
    turns: [{text: done}, {text: done}, {text: done}]
  - turns:
      - {text: "writing the first file with a long explanation of what it holds", calls: [{name: write, id: w1, args: {path: a.txt, content: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}], usage: {input: 200, output: 30}}
      - {text: "writing the second file with a long explanation of what it holds", calls: [{name: write, id: w2, args: {path: b.txt, content: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}], usage: {input: 400, output: 30}}
      - {text: done}
`
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s", Cwd: ws}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model, err := script.Parse([]byte(scenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := tool.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	set, _ := tool.New(fstool.Write(w))
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: s, MaxTurns: 10,
		Compactor: &contextpack.Compactor{Model: model, ContextWindow: 500, Reserve: 100, KeepRecent: 20}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.BeginRun())
	if _, err := a.Run(context.Background(), nil, llm.UserText("write notes")); err != nil {
		t.Fatal(err)
	}
	must(t, s.EndRun("completed"))
	must(t, s.Close())

	st, _, err := session.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Context()
	s2, _, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	want := s2.Context()
	if len(want) >= len(st.Conversation()) {
		t.Fatalf("the scenario did not compact: %d messages in context, %d in the transcript", len(want), len(st.Conversation()))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("State.Context differs from Session.Context (-want +got):\n%s", diff)
	}
}
