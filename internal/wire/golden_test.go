package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden fixtures in testdata")

// tail is a tool that reports partial output the way the shell tool does: each update is the
// output so far, and once the output outgrows its window the window moves.
type tail struct{}

func (tail) Spec() tool.Spec {
	return tool.Spec{Name: "tail", Description: "reports output", Snippet: "tail",
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (tail) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	for _, s := range []string{"line 1\n", "line 1\nline 2\n", "line 1\nline 2\n", "line 2\nline 3\n"} {
		call.Update(tool.TextResult(s))
	}
	r := tool.TextResult("line 2\nline 3\n")
	r.Details = map[string]any{"truncated": true}
	return r, nil
}

// compactor compacts once, before the first request that has more than four messages.
type compactor struct{ done bool }

func (c *compactor) Needed(msgs []llm.Message) bool { return !c.done && len(msgs) > 4 }

func (c *compactor) Compact(_ context.Context, msgs []llm.Message, _ string) (llm.Message, int, int, llm.Usage, error) {
	c.done = true
	return llm.UserText("Summary: the user asked twice."), len(msgs) - 1, 1234, llm.Usage{Input: 40, Output: 10}, nil
}

// inbox hands out its messages once.
type inbox struct{ steering, followUps []llm.Message }

func (i *inbox) Steering() []llm.Message  { s := i.steering; i.steering = nil; return s }
func (i *inbox) FollowUps() []llm.Message { s := i.followUps; i.followUps = nil; return s }

type goldenCase struct {
	name     string
	scenario string
	history  []llm.Message
	prompt   string
	config   func(*kernel.Config)
}

var cases = []goldenCase{
	{
		name: "tools",
		scenario: `
version: 1
pricing: {input: 2, output: 8}
turns:
  - thinking: Look first.
    text: Listing.
    calls: [{name: tail, id: c1, args: {}}, {name: nope, id: c2, args: {x: 1}}]
    usage: {input: 10, output: 5}
  - text: Two lines.
    usage: {input: 20, output: 2}
`,
		prompt: "list",
	},
	{
		name: "retry",
		scenario: `
version: 1
turns:
  - error: {kind: rate_limit, message: slow down, retryAfter: 2s, partial: Half a}
    times: 1
    text: Third time lucky.
`,
		prompt: "flaky",
	},
	{
		name: "failed",
		scenario: `
version: 1
turns:
  - error: {kind: auth, status: 401, message: bad key}
`,
		prompt: "go",
	},
	{
		name: "compaction",
		scenario: `
version: 1
turns:
  - text: Third answer.
`,
		history: []llm.Message{
			{ID: "h1", Role: llm.RoleUser, Content: []llm.Part{llm.Text("first")}, Time: 1},
			{ID: "h2", Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("First answer.")}, StopReason: llm.StopEnd, Time: 2},
			{ID: "h3", Role: llm.RoleUser, Content: []llm.Part{llm.Text("second")}, Time: 3},
			{ID: "h4", Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("Second answer.")}, StopReason: llm.StopEnd, Time: 4},
		},
		prompt: "third",
		config: func(c *kernel.Config) { c.Compactor = &compactor{} },
	},
	{
		name: "queued",
		scenario: `
version: 1
dialogs:
  - match: ^go$
    turns: [{text: Going.}]
  - match: ^faster$
    turns: [{text: Faster.}]
  - match: ^then stop$
    turns: [{text: Stopped.}]
`,
		prompt: "go",
		config: func(c *kernel.Config) {
			c.Inbox = &inbox{steering: []llm.Message{llm.UserText("faster")}, followUps: []llm.Message{llm.UserText("then stop")}}
		},
	},
}

// run runs a case on the script model and returns the wire lines of its events.
func run(t *testing.T, gc goldenCase) []byte {
	t.Helper()
	model, err := script.Parse([]byte(gc.scenario), gc.name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.New(tail{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	out := wire.NewWriter(&buf)
	conv := &wire.Converter{}
	var mu sync.Mutex
	n := 0
	clock := time.UnixMilli(1_700_000_000_000)
	cfg := kernel.Config{
		Model:    llm.Retry(model, llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Minute, Sleep: func(context.Context, time.Duration) error { return nil }}),
		Tools:    set,
		Recorder: &kernel.Memory{},
		NewID:    func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id%d", n) },
		Now:      func() time.Time { return clock },
		Observe: func(ev kernel.Event) {
			if w, ok := conv.Convert(ev); ok {
				if err := out.Write(w); err != nil {
					t.Error(err)
				}
			}
		},
	}
	if gc.config != nil {
		gc.config(&cfg)
	}
	a, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Run(context.Background(), gc.history, llm.UserText(gc.prompt))
	return buf.Bytes()
}

// TestGolden pins the wire schema: each case's event lines must match testdata/<case>.jsonl
// byte for byte (go test ./internal/wire -update rewrites them).
func TestGolden(t *testing.T) {
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			got := run(t, gc)
			file := filepath.Join("testdata", gc.name+".jsonl")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from this run's events (run with -update if the change is meant, and bump wire.Version if it breaks readers):\n%s", file, diffLines(string(want), string(got)))
			}
		})
	}
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// TestFixturesHoldOnlyDeltas reads the fixtures as a client would: no streaming update holds a
// message, the deltas of each assistant message add up to its text exactly once, and the
// output deltas of each tool add up to its last reported output.
func TestFixturesHoldOnlyDeltas(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) < len(cases) {
		t.Fatalf("found %d fixtures for %d cases", len(files), len(cases))
	}
	types := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var text, thinking strings.Builder
		output := map[string]string{}
		updates := map[string]int{}
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var ev wire.Event
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("%s:%d: %v", file, i+1, err)
			}
			if ev.V != wire.Version {
				t.Errorf("%s:%d: v %d", file, i+1, ev.V)
			}
			types[ev.Type] = true
			switch ev.Type {
			case "message_update", "tool_update":
				if ev.Message != nil || ev.Delta == nil {
					t.Errorf("%s:%d: a streaming update must carry a delta and no message: %s", file, i+1, line)
				}
			}
			switch {
			case ev.Type == "retry":
				text.Reset()
				thinking.Reset()
			case ev.Type == "message_update" && ev.Delta.Kind == "text_delta":
				text.WriteString(ev.Delta.Text)
			case ev.Type == "message_update" && ev.Delta.Kind == "thinking_delta":
				thinking.WriteString(ev.Delta.Text)
			case ev.Type == "message_end" && ev.Message.Role == "assistant" && ev.Message.StopReason != "error":
				var wantText, wantThinking string
				for _, p := range ev.Message.Content {
					switch p.Type {
					case "text":
						wantText += p.Text
					case "thinking":
						wantThinking += p.Text
					}
				}
				if text.String() != wantText || thinking.String() != wantThinking {
					t.Errorf("%s:%d: deltas add up to %q/%q, the message holds %q/%q", file, i+1, thinking.String(), text.String(), wantThinking, wantText)
				}
				text.Reset()
				thinking.Reset()
			case ev.Type == "tool_update":
				updates[ev.Call.ID]++
				if ev.Delta.Reset {
					output[ev.Call.ID] = ev.Delta.Text
				} else {
					output[ev.Call.ID] += ev.Delta.Text
				}
			case ev.Type == "tool_end" && updates[ev.Call.ID] > 0:
				var final string
				for _, p := range ev.Message.Content {
					final += p.Text
				}
				if output[ev.Call.ID] != final {
					t.Errorf("%s:%d: tool output deltas add up to %q, the result holds %q", file, i+1, output[ev.Call.ID], final)
				}
			}
		}
	}
	for _, typ := range []string{"agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
		"message_end", "tool_start", "tool_update", "tool_end", "compaction", "retry", "session_write"} {
		if !types[typ] {
			t.Errorf("no fixture has a %s event", typ)
		}
	}
}
