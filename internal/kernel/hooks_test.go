package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// spyModel records every request it gets and answers from a scenario.
type spyModel struct {
	mu   sync.Mutex
	reqs []llm.Request
	next llm.Model
}

func (s *spyModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
	s.mu.Lock()
	s.reqs = append(s.reqs, *req)
	s.mu.Unlock()
	return s.next.Stream(ctx, req, emit)
}

func (s *spyModel) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// hooked builds an agent over the probe tool p with the registry as its hooks.
func hooked(t *testing.T, yaml string, reg *hooks.Registry, p *probe, cfg kernel.Config) (*kernel.Agent, *spyModel, *kernel.Memory) {
	t.Helper()
	spy := &spyModel{next: scenario(t, yaml)}
	rec := &kernel.Memory{}
	n := 0
	cfg.Model, cfg.Tools, cfg.Recorder, cfg.Hooks = spy, mustSet(t, p), rec, reg
	cfg.NewID = func() string { n++; return fmt.Sprintf("id%d", n) }
	a, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, spy, rec
}

const oneCallThenDone = `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
  - text: done
`

// recordedResult returns the recorded result of call id and the id of the intent it settles.
func recordedResult(t *testing.T, rec *kernel.Memory, callID string) (llm.Message, string) {
	t.Helper()
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok {
			for _, e := range s.Entries {
				if e.Message.ToolCallID == callID {
					return e.Message, s.IntentID
				}
			}
		}
	}
	t.Fatalf("no result recorded for %s", callID)
	return llm.Message{}, ""
}

func TestHookPointsRunInOrderAndSessionStartOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s)
	}
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.SessionStart) error { note("session_start"); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.BeforeAgentStart) error { note("before_agent_start"); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.Context) error { note(fmt.Sprintf("context/%d", ev.Turn)); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.BeforeProviderRequest) error {
		note(fmt.Sprintf("before_provider_request/%d", ev.Turn))
		return nil
	})
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.BeforeTool) error { note("before_tool/" + ev.Call.ID); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.AfterTool) error { note("after_tool/" + ev.Call.ID); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.TurnEnd) error {
		note(fmt.Sprintf("turn_end/%d/%d", ev.Turn, len(ev.Results)))
		return nil
	})
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.Stop) error { note("stop"); return nil })
	hooks.On(reg, "h", func(_ context.Context, ev *hooks.SessionEnd) error { note("session_end/" + ev.Reason); return nil })
	yaml := `
version: 1
dialogs:
  - match: again
    turns: [{text: again}]
  - turns:
      - calls:
          - {name: p, id: c1, args: {n: 1}}
      - text: done
`
	a, _, _ := hooked(t, yaml, reg, &probe{name: "p"}, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), out.Messages, llm.UserText("again")); err != nil {
		t.Fatal(err)
	}
	if err := a.End(context.Background(), hooks.EndExit); err != nil {
		t.Fatal(err)
	}
	if err := a.End(context.Background(), hooks.EndExit); err != nil {
		t.Fatal(err)
	}
	want := "session_start before_agent_start context/1 before_provider_request/1 before_tool/c1 after_tool/c1 turn_end/1/1 " +
		"context/2 before_provider_request/2 turn_end/2/0 stop " +
		"before_agent_start context/1 before_provider_request/1 turn_end/1/0 stop session_end/exit"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("points:\n got %s\nwant %s", got, want)
	}
}

func TestBeforeAgentStartExtendsSystemAndReplacesPrompt(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "session", func(_ context.Context, ev *hooks.SessionStart) error {
		ev.System += "\nsession context"
		return nil
	})
	hooks.On(reg, "prompt", func(_ context.Context, ev *hooks.BeforeAgentStart) error {
		if !strings.HasSuffix(ev.System, "session context") {
			t.Errorf("before_agent_start saw system %q", ev.System)
		}
		ev.System += "\nrun context"
		p := *ev.Prompt
		p.Content = append(append([]llm.Part(nil), p.Content...), llm.Text("extra"))
		ev.Prompt = &p
		return nil
	})
	a, spy, rec := hooked(t, "version: 1\nturns:\n  - text: done\n", reg, &probe{name: "p"}, kernel.Config{System: "base"})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	req := spy.requests()[0]
	if req.System != "base\nsession context\nrun context" {
		t.Errorf("system sent %q", req.System)
	}
	s := rec.Records()[0].(kernel.Settlement)
	if got := s.Entries[0].Message; got.Text() != "goextra" || got.Role != llm.RoleUser {
		t.Errorf("recorded prompt %+v, want the hook's", got)
	}
}

func TestBeforeAgentStartBlockRecordsNothing(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "guard", func(_ context.Context, ev *hooks.BeforeAgentStart) error {
		ev.Block = errors.New("prompts mentioning secrets are refused")
		return nil
	})
	hooks.On(reg, "later", func(_ context.Context, ev *hooks.BeforeAgentStart) error {
		t.Error("a hook after the first block ran")
		return nil
	})
	a, spy, rec := hooked(t, "version: 1\nturns:\n  - text: done\n", reg, &probe{name: "p"}, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("my secret"))
	if !errors.Is(err, kernel.ErrHookBlocked) || out.Status != kernel.StatusBlocked || !strings.Contains(err.Error(), "secrets are refused") {
		t.Fatalf("run: %v (status %s), want blocked by the hook", err, out.Status)
	}
	if len(rec.Records()) != 0 || len(spy.requests()) != 0 {
		t.Errorf("%d records, %d requests; a refused prompt is neither recorded nor sent", len(rec.Records()), len(spy.requests()))
	}
}

func TestContextAndRequestHooksChangeWhatIsSentNotWhatIsRecorded(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	// A kernel.ContextHook serves as a registry hook too.
	reg.ContextHook("cut", contextpack.CutAtPrefix{Prefix: "PACK"})
	hooks.On(reg, "more", func(_ context.Context, ev *hooks.Context) error {
		ev.Messages = append(append([]llm.Message(nil), ev.Messages...), llm.UserText("reminder"))
		return nil
	})
	hooks.On(reg, "req", func(_ context.Context, ev *hooks.BeforeProviderRequest) error {
		r := *ev.Request
		r.MaxTokens = 77
		ev.Request = &r
		return nil
	})
	a, spy, rec := hooked(t, "version: 1\nturns:\n  - text: done\n", reg, &probe{name: "p"}, kernel.Config{MaxTokens: 10})
	history := []llm.Message{llm.UserText("old"), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("old answer")}}}
	if _, err := a.Run(context.Background(), history, llm.UserText("PACK go")); err != nil {
		t.Fatal(err)
	}
	req := spy.requests()[0]
	if len(req.Messages) != 2 || req.Messages[0].Text() != "PACK go" || req.Messages[1].Text() != "reminder" || req.MaxTokens != 77 {
		t.Errorf("request sent: %d messages %+v, maxTokens %d", len(req.Messages), req.Messages, req.MaxTokens)
	}
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok {
			for _, e := range s.Entries {
				if e.Message.Text() == "reminder" {
					t.Error("a context hook's message was recorded")
				}
			}
		}
	}
}

func TestBeforeToolBlockFirstWins(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "guard", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Block = errors.New("p is not allowed on Fridays")
		return nil
	})
	hooks.On(reg, "later", func(_ context.Context, ev *hooks.BeforeTool) error {
		t.Error("a hook after the first block ran")
		return nil
	})
	p := &probe{name: "p"}
	a, _, rec := hooked(t, oneCallThenDone, reg, p, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || out.Status != kernel.StatusCompleted {
		t.Fatalf("run: %v (%s); a block alone does not end the run", err, out.Status)
	}
	if len(p.ran()) != 0 || len(intentCalls(rec)) != 0 {
		t.Errorf("tool ran %v, intents %v; a blocked call neither runs nor is announced", p.ran(), intentCalls(rec))
	}
	res, intent := recordedResult(t, rec, "c1")
	if !res.IsError || res.Text() != "p is not allowed on Fridays" || intent != "" {
		t.Errorf("result %+v (intent %q)", res, intent)
	}
	if len(out.Refused) != 1 || out.Refused[0].Call.ID != "c1" {
		t.Errorf("Refused = %+v", out.Refused)
	}
}

func TestBeforeToolNeedsApprovalBlocksTheRun(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "ask", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Block = fmt.Errorf("the hook asks: %w", kernel.ErrNeedsApproval)
		return nil
	})
	a, _, _ := hooked(t, oneCallThenDone, reg, &probe{name: "p"}, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if !errors.Is(err, kernel.ErrNeedsApproval) || out.Status != kernel.StatusBlocked {
		t.Errorf("run: %v (%s), want blocked for want of approval", err, out.Status)
	}
}

func TestBeforeToolRewritesChainAndAreValidatedAgain(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "double", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n": 2}`)
		return nil
	})
	hooks.On(reg, "triple", func(_ context.Context, ev *hooks.BeforeTool) error {
		if string(ev.Args) != `{"n": 2}` {
			t.Errorf("second hook saw %s, want the first hook's rewrite", ev.Args)
		}
		ev.Args = json.RawMessage(`{"n": 3}`)
		return nil
	})
	p := &probe{name: "p"}
	a, _, rec := hooked(t, oneCallThenDone, reg, p, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	res, _ := recordedResult(t, rec, "c1")
	if !strings.Contains(res.Text(), `{"n": 3}`) && !strings.Contains(res.Text(), `{"n":3}`) {
		t.Errorf("tool result %q, want it to have run with the rewritten arguments", res.Text())
	}
	for _, r := range rec.Records() {
		if in, ok := r.(kernel.Intent); ok && in.Kind == kernel.IntentToolCall && !strings.Contains(in.Call.Arguments, "3") {
			t.Errorf("intent records arguments %s; recovery must replay what ran", in.Call.Arguments)
		}
	}

	// A rewrite that does not validate is the call's error result; the tool never runs.
	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "bad", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"bogus": true}`)
		return nil
	})
	p = &probe{name: "p"}
	a, _, rec = hooked(t, oneCallThenDone, reg, p, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	res, _ = recordedResult(t, rec, "c1")
	if len(p.ran()) != 0 || !res.IsError || !strings.Contains(res.Text(), "rewrote the arguments") || !strings.Contains(res.Text(), "bogus") {
		t.Errorf("ran %v, result %q", p.ran(), res.Text())
	}

	// A valid rewrite is put to the gate again.
	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "escalate", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n": 666}`)
		return nil
	})
	g := gateFunc(func(call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
		if strings.Contains(string(args), "666") {
			return errors.New("policy.denied: 666")
		}
		return nil
	})
	p = &probe{name: "p"}
	a, _, rec = hooked(t, oneCallThenDone, reg, p, kernel.Config{Gate: g})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if res, _ = recordedResult(t, rec, "c1"); len(p.ran()) != 0 || res.Text() != "policy.denied: 666" {
		t.Errorf("ran %v, result %q; the gate must judge the rewritten call", p.ran(), res.Text())
	}
}

func TestAfterToolReplacesTheResult(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "redact", func(_ context.Context, ev *hooks.AfterTool) error {
		ev.Result = &llm.Message{Content: []llm.Part{llm.Text("[redacted]")}}
		return nil
	})
	a, spy, rec := hooked(t, oneCallThenDone, reg, &probe{name: "p"}, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	res, intent := recordedResult(t, rec, "c1")
	if res.Text() != "[redacted]" || res.Role != llm.RoleTool || res.ToolName != "p" || intent == "" {
		t.Errorf("recorded %+v under intent %q", res, intent)
	}
	sent := spy.requests()[1].Messages
	if last := sent[len(sent)-1]; last.Text() != "[redacted]" {
		t.Errorf("the model saw %q", last.Text())
	}
}

func TestFailingHooksFailOpenOrClosed(t *testing.T) {
	var runs []hooks.Run
	var mu sync.Mutex
	report := func(r hooks.Run) { mu.Lock(); runs = append(runs, r); mu.Unlock() }

	// Fail open: a panicking hook's changes are undone, the next hook runs, the call runs.
	reg := hooks.New(hooks.Options{Report: report})
	hooks.On(reg, "crashy", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Block = errors.New("half-made decision")
		panic("kaboom")
	})
	next := false
	hooks.On(reg, "next", func(_ context.Context, ev *hooks.BeforeTool) error {
		next = ev.Block == nil
		return nil
	})
	p := &probe{name: "p"}
	a, _, _ := hooked(t, oneCallThenDone, reg, p, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if !next || len(p.ran()) != 1 {
		t.Errorf("next hook saw a clean payload: %v; tool ran %v", next, p.ran())
	}
	if len(runs) != 2 || runs[0].Outcome != hooks.OutcomeFailed || runs[0].Detail != "panic" || runs[1].Outcome != hooks.OutcomeOK {
		t.Errorf("reported %+v", runs)
	}

	// Fail closed at before_tool: the call is refused, the run goes on.
	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "strict", func(_ context.Context, ev *hooks.BeforeTool) error {
		return errors.New("policy server unreachable")
	}, hooks.FailClosed())
	p = &probe{name: "p"}
	a, _, rec := hooked(t, oneCallThenDone, reg, p, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || len(p.ran()) != 0 {
		t.Fatalf("run %v, ran %v", err, p.ran())
	}
	if res, _ := recordedResult(t, rec, "c1"); !res.IsError || !strings.Contains(res.Text(), "policy server unreachable") {
		t.Errorf("result %q", res.Text())
	}
	if len(out.Refused) != 1 {
		t.Errorf("Refused %+v", out.Refused)
	}

	// Fail closed at after_tool: the result is withheld.
	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "scan", func(_ context.Context, ev *hooks.AfterTool) error {
		return errors.New("scanner crashed")
	}, hooks.FailClosed())
	a, _, rec = hooked(t, oneCallThenDone, reg, &probe{name: "p"}, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if res, _ := recordedResult(t, rec, "c1"); !res.IsError || !strings.Contains(res.Text(), "withheld") {
		t.Errorf("result %q", res.Text())
	}

	// Fail closed at context: the run ends blocked before any intent.
	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "ctx", func(_ context.Context, ev *hooks.Context) error { panic("bad context hook") }, hooks.FailClosed())
	a, spy, rec := hooked(t, oneCallThenDone, reg, &probe{name: "p"}, kernel.Config{})
	out, err = a.Run(context.Background(), nil, llm.UserText("go"))
	var he *kernel.HookError
	if !errors.As(err, &he) || he.Point != hooks.PointContext || out.Status != kernel.StatusBlocked || len(spy.requests()) != 0 {
		t.Fatalf("run %v (%s), %d requests", err, out.Status, len(spy.requests()))
	}
	for _, r := range rec.Records() {
		if _, ok := r.(kernel.Intent); ok {
			t.Errorf("intent %+v recorded; a failed request hook leaves none open", r)
		}
	}
}

func TestStopRunEndsTheRunAfterTheBatch(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "quota", func(_ context.Context, ev *hooks.AfterTool) error {
		return hooks.StopRun("quota reached")
	})
	yaml := `
version: 1
turns:
  - calls:
      - {name: p, id: c1, args: {n: 1}}
      - {name: p, id: c2, args: {n: 2}}
  - text: done
`
	p := &probe{name: "p"}
	a, spy, rec := hooked(t, yaml, reg, p, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	var stop *hooks.StopError
	if !errors.Is(err, kernel.ErrHookBlocked) || !errors.As(err, &stop) || stop.Reason != "quota reached" || out.Status != kernel.StatusBlocked {
		t.Fatalf("run %v (%s)", err, out.Status)
	}
	if len(spy.requests()) != 1 || len(p.ran()) != 2 {
		t.Errorf("%d requests, ran %v; the batch finishes, no further turn", len(spy.requests()), p.ran())
	}
	recordedResult(t, rec, "c1")
	recordedResult(t, rec, "c2")
}

func TestStopHookContinuesTheRun(t *testing.T) {
	reg := hooks.New(hooks.Options{})
	var active []bool
	hooks.On(reg, "tests", func(_ context.Context, ev *hooks.Stop) error {
		active = append(active, ev.Active)
		if !ev.Active {
			ev.Continue = "the tests fail; fix them"
		}
		return nil
	})
	yaml := `
version: 1
dialogs:
  - match: fix them
    turns: [{text: fixed}]
  - turns: [{text: done}]
`
	a, spy, _ := hooked(t, yaml, reg, &probe{name: "p"}, kernel.Config{})
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil || out.Final.Text() != "fixed" || out.Turns != 2 {
		t.Fatalf("run %v, final %q, %d turns", err, out.Final.Text(), out.Turns)
	}
	if fmt.Sprint(active) != "[false true]" {
		t.Errorf("Active %v", active)
	}
	sent := spy.requests()[1].Messages
	if last := sent[len(sent)-1]; last.Role != llm.RoleUser || last.Text() != "the tests fail; fix them" {
		t.Errorf("second request ends with %+v", last)
	}
	var users int
	for _, m := range out.Messages {
		if m.Role == llm.RoleUser {
			users++
		}
	}
	if users != 2 {
		t.Errorf("%d user messages in the run, want the prompt and the hook's", users)
	}
}

// historyWithIDs is a compactable conversation whose messages carry recorded ids.
func historyWithIDs() []llm.Message {
	var h []llm.Message
	for i := range 6 {
		u := llm.UserText(fmt.Sprintf("question %d %s", i, strings.Repeat("x", 200)))
		u.ID = fmt.Sprintf("u%d", i)
		m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text(fmt.Sprintf("answer %d %s", i, strings.Repeat("y", 200)))}}
		m.ID = fmt.Sprintf("a%d", i)
		h = append(h, u, m)
	}
	return h
}

// failingModel fails the test if it is asked anything.
func failingModel(t *testing.T) llm.Model {
	return llm.ModelFunc(func(context.Context, *llm.Request, func(llm.Event)) *llm.Message {
		t.Error("the compactor's model was called")
		return llm.Fail(&llm.Message{Role: llm.RoleAssistant}, &llm.Error{Kind: llm.KindProtocol, Message: "unexpected"})
	})
}

func TestBeforeCompactCancelsOrSuppliesTheSummary(t *testing.T) {
	comp := &contextpack.Compactor{Model: failingModel(t), ContextWindow: 100000, KeepRecent: 60}

	reg := hooks.New(hooks.Options{})
	hooks.On(reg, "veto", func(_ context.Context, ev *hooks.BeforeCompact) error {
		if !ev.Manual || ev.Instructions != "focus" || len(ev.Messages) != 12 {
			t.Errorf("payload %+v", ev)
		}
		ev.Cancel = errors.New("not now")
		return nil
	})
	a, _, rec := hooked(t, "version: 1\nturns: [{text: unused}]\n", reg, &probe{name: "p"}, kernel.Config{Compactor: comp})
	_, err := a.Compact(context.Background(), historyWithIDs(), "focus")
	if !errors.Is(err, kernel.ErrCompactionCancelled) || !errors.Is(err, kernel.ErrCompactionFailed) || !strings.Contains(err.Error(), "not now") {
		t.Errorf("compact: %v", err)
	}
	if len(rec.Records()) != 0 {
		t.Errorf("records %+v; a cancelled compaction records nothing", rec.Records())
	}

	reg = hooks.New(hooks.Options{})
	hooks.On(reg, "mine", func(_ context.Context, ev *hooks.BeforeCompact) error {
		s := llm.UserText("my own summary")
		ev.Summary, ev.TokensBefore = &s, 1234
		return nil
	})
	hooks.On(reg, "later", func(_ context.Context, ev *hooks.BeforeCompact) error {
		t.Error("a hook after the one that supplied the summary ran")
		return nil
	})
	a, _, rec = hooked(t, "version: 1\nturns: [{text: unused}]\n", reg, &probe{name: "p"}, kernel.Config{Compactor: comp})
	out, err := a.Compact(context.Background(), historyWithIDs(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := comp.Cut(historyWithIDs())
	if want <= 0 {
		t.Fatalf("test history has nothing to cut")
	}
	if out[0].Text() != "my own summary" || len(out) != 1+12-want {
		t.Errorf("context after: %d messages, first %q", len(out), out[0].Text())
	}
	var entry *kernel.Entry
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok && len(s.Entries) == 1 {
			entry = &s.Entries[0]
		}
	}
	if entry == nil || entry.Compaction == nil || entry.Compaction.TokensBefore != 1234 || entry.Compaction.FirstKeptID != historyWithIDs()[want].ID {
		t.Errorf("recorded %+v", entry)
	}
}

func TestHookRunsAreReported(t *testing.T) {
	var runs []hooks.Run
	reg := hooks.New(hooks.Options{Report: func(r hooks.Run) { runs = append(runs, r) }})
	hooks.On(reg, "rewrite", func(_ context.Context, ev *hooks.BeforeTool) error {
		ev.Args = json.RawMessage(`{"n":5}`)
		return nil
	})
	hooks.On(reg, "look", func(_ context.Context, ev *hooks.BeforeTool) error { return nil })
	hooks.On(reg, "stop", func(_ context.Context, ev *hooks.TurnEnd) error { return hooks.StopRun("enough") })
	a, _, _ := hooked(t, oneCallThenDone, reg, &probe{name: "p"}, kernel.Config{})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); !errors.Is(err, kernel.ErrHookBlocked) {
		t.Fatalf("run %v", err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s@%s=%s", r.Hook, r.Point, r.Outcome))
	}
	want := "rewrite@before_tool=changed look@before_tool=ok stop@turn_end=stopped"
	if strings.Join(got, " ") != want {
		t.Errorf("reported %s\nwant     %s", strings.Join(got, " "), want)
	}
}
