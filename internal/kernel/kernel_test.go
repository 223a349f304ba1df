package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/tool"
)

// probe is a real tool whose behaviour the test controls: it records its calls, can block until
// released, and can fail or panic.
type probe struct {
	name       string
	sequential bool
	mu         sync.Mutex
	calls      []string
	running    atomic.Int32
	maxRunning atomic.Int32
	gate       chan struct{} // if not nil, Run waits for it (or ctx)
	started    chan string   // if not nil, receives the call id when Run starts
	onRun      func(call tool.Call) (tool.Result, error)
}

var probeSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"text":{"type":"string"}},"additionalProperties":false}`)

func (p *probe) Spec() tool.Spec {
	return tool.Spec{Name: p.name, Description: "test probe", Snippet: "probe", Schema: probeSchema,
		Sequential: p.sequential, Replay: tool.ReplaySafe}
}

func (p *probe) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	n := p.running.Add(1)
	defer p.running.Add(-1)
	for {
		m := p.maxRunning.Load()
		if n <= m || p.maxRunning.CompareAndSwap(m, n) {
			break
		}
	}
	p.mu.Lock()
	p.calls = append(p.calls, call.ID)
	p.mu.Unlock()
	if p.started != nil {
		p.started <- call.ID
	}
	if p.gate != nil {
		select {
		case <-p.gate:
		case <-ctx.Done():
			return tool.Result{}, fmt.Errorf("probe %s: %w", call.ID, ctx.Err())
		}
	}
	if p.onRun != nil {
		return p.onRun(call)
	}
	return tool.TextResult("ran " + call.ID + " " + string(call.Args)), nil
}

func (p *probe) ran() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func scenario(t testing.TB, yaml string) llm.Model {
	t.Helper()
	m, err := script.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return &vouching{t: t, next: m} // every test checks what the requests' lineages vouch for
}

func newAgent(t *testing.T, model llm.Model, rec kernel.Recorder, tools ...tool.Tool) (*kernel.Agent, *[]kernel.Event) {
	t.Helper()
	set, err := tool.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	events := &[]kernel.Event{}
	n := 0
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec,
		NewID: func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id%d", n) },
		Observe: func(ev kernel.Event) {
			mu.Lock()
			defer mu.Unlock()
			*events = append(*events, ev)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a, events
}

// toolResults returns the tool result messages of an outcome.
func toolResults(out *kernel.Outcome) []llm.Message {
	var rs []llm.Message
	for _, m := range out.Messages {
		if m.Role == llm.RoleTool {
			rs = append(rs, m)
		}
	}
	return rs
}

func TestEveryCallGetsOneResultInSourceOrder(t *testing.T) {
	model := scenario(t, `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
      - {name: missing, id: c2, args: {}}
      - {name: p, id: c3, raw: '{"n": 1, "n": 2}'}
      - {name: p, id: c4, raw: '{"N": 1}'}
      - {name: p, id: c5, raw: '{"bogus": true}'}
      - {name: p, id: c6, args: {n: "x"}}
      - {name: p, id: c7, raw: "{\"text\": \"INVALID\"}"}
      - {name: p, id: c8, args: {text: ok}}
  - text: done
`)
	// YAML cannot hold invalid UTF-8, so the model's bytes are corrupted on the way out.
	model = invalidUTF8(model)
	p := &probe{name: "p"}
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	rs := toolResults(out)
	wantIDs := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	if len(rs) != len(wantIDs) {
		t.Fatalf("%d results, want %d", len(rs), len(wantIDs))
	}
	wantErr := map[string]string{
		"c2": `Tool "missing" not found`,
		"c3": "duplicate",
		"c4": `"n"`,
		"c5": "bogus",
		"c6": "n",
		"c7": "UTF-8",
	}
	for i, r := range rs {
		if r.ToolCallID != wantIDs[i] {
			t.Errorf("result %d answers %s, want %s (source order)", i, r.ToolCallID, wantIDs[i])
		}
		if frag, bad := wantErr[r.ToolCallID]; bad {
			if !r.IsError || !strings.Contains(r.Text(), frag) {
				t.Errorf("%s: result %q (isError %v), want an error mentioning %q", r.ToolCallID, r.Text(), r.IsError, frag)
			}
		} else if r.IsError {
			t.Errorf("%s: unexpected error result %q", r.ToolCallID, r.Text())
		}
	}
	got := p.ran()
	if len(got) != 2 {
		t.Errorf("the tool ran for %v; only c1 and c8 are valid calls", got)
	}
	if out.Final.Text() != "done" || out.Turns != 2 {
		t.Errorf("final %q after %d turns", out.Final.Text(), out.Turns)
	}
}

// invalidUTF8 replaces INVALID in tool-call arguments with a byte that is not UTF-8.
func invalidUTF8(m llm.Model) llm.Model {
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		msg := m.Stream(ctx, req, emit)
		for _, c := range msg.ToolCalls() {
			c.Arguments = strings.ReplaceAll(c.Arguments, "INVALID", "\xff")
		}
		return msg
	})
}

func TestLengthTruncatedCallsAreNeverExecuted(t *testing.T) {
	model := scenario(t, `
version: 1
turns:
  - text: writing
    stop: length
    calls:
      - {name: p, id: c1, args: {n: 1}}
      - {name: p, id: c2, raw: '{"text": "abc'}
  - text: ok, re-issuing later
`)
	p := &probe{name: "p"}
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if ran := p.ran(); len(ran) != 0 {
		t.Fatalf("calls of a length-truncated message ran: %v", ran)
	}
	rs := toolResults(out)
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if !r.IsError || !strings.Contains(r.Text(), "output token limit") {
			t.Errorf("%s: %q, want the truncation error", r.ToolCallID, r.Text())
		}
	}
}

func TestParallelBatchRunsConcurrentlyAndSequentialForcesOrder(t *testing.T) {
	const yaml = `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
      - {name: p, id: c2, args: {n: 2}}
      - {name: p, id: c3, args: {n: 3}}
  - text: done
`
	t.Run("parallel", func(t *testing.T) {
		// All three must be running at once before any may finish: this deadlocks (and the
		// test times out) unless the batch really runs in parallel.
		p := &probe{name: "p", gate: make(chan struct{}), started: make(chan string, 3)}
		a, events := newAgent(t, scenario(t, yaml), &kernel.Memory{}, p)
		done := make(chan struct{})
		var out *kernel.Outcome
		go func() {
			defer close(done)
			out, _ = a.Run(context.Background(), nil, llm.UserText("go"))
		}()
		for range 3 {
			<-p.started
		}
		close(p.gate)
		<-done
		if p.maxRunning.Load() != 3 {
			t.Errorf("max concurrent runs = %d, want 3", p.maxRunning.Load())
		}
		rs := toolResults(out)
		for i, id := range []string{"c1", "c2", "c3"} {
			if rs[i].ToolCallID != id {
				t.Errorf("result %d = %s, want %s", i, rs[i].ToolCallID, id)
			}
		}
		// tool_start events come in source order before any tool_end.
		var order []string
		for _, ev := range *events {
			if ev.Type == kernel.EventToolStart || ev.Type == kernel.EventToolEnd {
				order = append(order, string(ev.Type)+" "+ev.Call.ID)
			}
		}
		if strings.Join(order[:3], ",") != "tool_start c1,tool_start c2,tool_start c3" {
			t.Errorf("event order %v", order)
		}
	})
	t.Run("sequential", func(t *testing.T) {
		p := &probe{name: "p", sequential: true}
		a, _ := newAgent(t, scenario(t, yaml), &kernel.Memory{}, p)
		if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
			t.Fatal(err)
		}
		if p.maxRunning.Load() != 1 {
			t.Errorf("max concurrent runs = %d, want 1 for a sequential tool", p.maxRunning.Load())
		}
		if got := strings.Join(p.ran(), ","); got != "c1,c2,c3" {
			t.Errorf("ran %s, want c1,c2,c3 in order", got)
		}
	})
}

// checkingRecorder asserts the durability rule: when a tool runs, its intent is already
// recorded, and every settlement carries exactly the ids its intent reserved.
type checkingRecorder struct {
	kernel.Memory
	mu      sync.Mutex
	intents map[string]kernel.Intent
	byCall  map[string]bool
	failOn  func(kind string, n int) error
	n       int
}

func (r *checkingRecorder) Intend(ctx context.Context, in kernel.Intent) error {
	r.mu.Lock()
	r.n++
	n := r.n
	if r.intents == nil {
		r.intents, r.byCall = map[string]kernel.Intent{}, map[string]bool{}
	}
	r.intents[in.ID] = in
	if in.Call != nil {
		r.byCall[in.Call.ID] = true
	}
	r.mu.Unlock()
	if r.failOn != nil {
		if err := r.failOn("intent", n); err != nil {
			return err
		}
	}
	return r.Memory.Intend(ctx, in)
}

func (r *checkingRecorder) Settle(ctx context.Context, s kernel.Settlement) error {
	r.mu.Lock()
	r.n++
	n := r.n
	in, ok := r.intents[s.IntentID]
	r.mu.Unlock()
	if s.IntentID != "" {
		if !ok {
			return fmt.Errorf("settlement for unknown intent %s", s.IntentID)
		}
		var got []string
		for _, e := range s.Entries {
			got = append(got, e.ID)
		}
		if strings.Join(got, ",") != strings.Join(in.Reserved, ",") {
			return fmt.Errorf("settlement ids %v, intent reserved %v", got, in.Reserved)
		}
	}
	if r.failOn != nil {
		if err := r.failOn("settle", n); err != nil {
			return err
		}
	}
	return r.Memory.Settle(ctx, s)
}

func (r *checkingRecorder) intended(callID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byCall[callID]
}

func TestIntentPrecedesEveryEffect(t *testing.T) {
	rec := &checkingRecorder{}
	p := &probe{name: "p"}
	p.onRun = func(call tool.Call) (tool.Result, error) {
		if !rec.intended(call.ID) {
			t.Errorf("tool %s ran before its intent was recorded", call.ID)
		}
		return tool.TextResult("ok"), nil
	}
	model := scenario(t, `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {}}, {name: p, id: c2, args: {}}]
  - text: done
`)
	a, _ := newAgent(t, model, rec, p)
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	// Expected record sequence: prompt, model intent+settle, 2 tool intents, 2 settles,
	// model intent+settle.
	var kinds []string
	for _, r := range rec.Records() {
		switch r := r.(type) {
		case kernel.Intent:
			kinds = append(kinds, "intent:"+string(r.Kind))
		case kernel.Settlement:
			if r.IntentID == "" {
				kinds = append(kinds, "fact")
			} else {
				kinds = append(kinds, "settle")
			}
		}
	}
	want := "fact,intent:model_call,settle,intent:tool_call,intent:tool_call,settle,settle,intent:model_call,settle"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("records:\n got %s\nwant %s", got, want)
	}
}

func TestRecorderFailureStopsBeforeTheEffect(t *testing.T) {
	boom := errors.New("disk full")
	rec := &checkingRecorder{failOn: func(kind string, n int) error {
		if kind == "intent" && n > 3 { // the first tool intent
			return boom
		}
		return nil
	}}
	p := &probe{name: "p"}
	model := scenario(t, `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {}}]
  - text: done
`)
	a, _ := newAgent(t, model, rec, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var re *kernel.RecordError
	if !errors.As(err, &re) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want a RecordError wrapping the recorder's error", err)
	}
	if out.Status != kernel.StatusFailed {
		t.Errorf("status %s", out.Status)
	}
	if ran := p.ran(); len(ran) != 0 {
		t.Errorf("the tool ran (%v) although its intent could not be recorded", ran)
	}
}

func TestAbortCancelsRunningToolsAndEndsAborted(t *testing.T) {
	p := &probe{name: "p", gate: make(chan struct{}), started: make(chan string, 2)}
	model := scenario(t, `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {}}, {name: p, id: c2, args: {}}]
  - text: never
`)
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-p.started
		<-p.started
		cancel()
	}()
	out, err := a.Run(ctx, nil, llm.UserText("go"))
	if !errors.Is(err, kernel.ErrAborted) || out.Status != kernel.StatusAborted {
		t.Fatalf("err %v status %s, want aborted", err, out.Status)
	}
	rs := toolResults(out)
	if len(rs) != 2 {
		t.Fatalf("%d results after abort, want 2 (every call gets one)", len(rs))
	}
	for _, r := range rs {
		if !r.IsError || !strings.Contains(r.Text(), "canceled") {
			t.Errorf("%s: %q", r.ToolCallID, r.Text())
		}
	}
	if out.Turns != 1 {
		t.Errorf("turns %d: no model call may start after an abort", out.Turns)
	}
}

func TestToolPanicBecomesErrorResult(t *testing.T) {
	p := &probe{name: "p", onRun: func(tool.Call) (tool.Result, error) { panic("kaboom") }}
	model := scenario(t, `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {}}]
  - text: recovered
`)
	a, _ := newAgent(t, model, &kernel.Memory{}, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(out)[0]
	if !r.IsError || !strings.Contains(r.Text(), "kaboom") {
		t.Errorf("result %q", r.Text())
	}
}

func TestBudgets(t *testing.T) {
	loop := `
version: 1
pricing: {input: 1000000, output: 0}
turns:
  - {calls: [{name: p, args: {}}], usage: {input: 1}}
  - {calls: [{name: p, args: {}}], usage: {input: 1}}
  - {calls: [{name: p, args: {}}], usage: {input: 1}}
  - {text: done, usage: {input: 1}}
`
	t.Run("turns", func(t *testing.T) {
		a, _ := newAgentWith(t, scenario(t, loop), kernel.Config{MaxTurns: 2})
		out, err := a.Run(context.Background(), nil, llm.UserText("go"))
		var be *kernel.BudgetError
		if !errors.As(err, &be) || be.Budget != "turns" || out.Turns != 2 || out.Status != kernel.StatusBudget {
			t.Fatalf("err %v turns %d status %s", err, out.Turns, out.Status)
		}
		if n := len(toolResults(out)); n != 2 {
			t.Errorf("%d tool results, want 2: the last turn's calls still get results", n)
		}
	})
	t.Run("cost", func(t *testing.T) {
		// Each turn costs $1; the budget of $2.5 allows three model calls.
		a, _ := newAgentWith(t, scenario(t, loop), kernel.Config{MaxCost: 2.5})
		out, err := a.Run(context.Background(), nil, llm.UserText("go"))
		var be *kernel.BudgetError
		if !errors.As(err, &be) || be.Budget != "cost" || out.Turns != 3 {
			t.Fatalf("err %v turns %d", err, out.Turns)
		}
		if out.Usage.Cost.Total != 3 {
			t.Errorf("cost %v, want 3", out.Usage.Cost.Total)
		}
	})
	t.Run("within", func(t *testing.T) {
		a, _ := newAgentWith(t, scenario(t, loop), kernel.Config{MaxTurns: 4, MaxCost: 10})
		if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
			t.Fatal(err)
		}
	})
}

func newAgentWith(t *testing.T, model llm.Model, cfg kernel.Config) (*kernel.Agent, *probe) {
	t.Helper()
	p := &probe{name: "p"}
	set, err := tool.New(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model, cfg.Tools, cfg.Recorder = model, set, &kernel.Memory{}
	a, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, p
}

func TestModelFailureIsTyped(t *testing.T) {
	model := scenario(t, `
version: 1
turns:
  - error: {kind: auth, message: "invalid x-api-key", status: 401}
`)
	a, _ := newAgentWith(t, model, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var me *kernel.ModelError
	var le *llm.Error
	if !errors.As(err, &me) || !errors.As(err, &le) || le.Kind != llm.KindAuth {
		t.Fatalf("err = %v, want a ModelError wrapping an auth llm.Error", err)
	}
	if out.Status != kernel.StatusFailed || out.Final == nil || out.Final.StopReason != llm.StopError {
		t.Errorf("outcome %+v", out)
	}
}

func TestHistoryIsNotModifiedAndContextGrowsAtTheTail(t *testing.T) {
	var seen [][]llm.Message
	inner := scenario(t, `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {}}]
  - text: done
`)
	model := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		seen = append(seen, append([]llm.Message(nil), req.Messages...))
		return inner.Stream(ctx, req, emit)
	})
	a, _ := newAgentWith(t, model, kernel.Config{})
	history := []llm.Message{llm.UserText("earlier"), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hi")}, StopReason: llm.StopEnd}}
	before, _ := json.Marshal(history)
	if _, err := a.Run(context.Background(), history, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(history)
	if string(before) != string(after) {
		t.Error("Run modified the caller's history")
	}
	if len(seen) != 2 {
		t.Fatalf("%d model calls", len(seen))
	}
	first, _ := json.Marshal(seen[0])
	second, _ := json.Marshal(seen[1][:len(seen[0])])
	if string(first) != string(second) {
		t.Error("the second request does not extend the first at the tail (prompt caches would break)")
	}
}

func mustSet(t testing.TB, tools ...tool.Tool) *tool.Set {
	t.Helper()
	set, err := tool.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
