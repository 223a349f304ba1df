package session_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// invalidFixture is a session in a run: the prompt u1, the assistant message a1 calling c1 and
// c2, c1 answered (intent i-t1, result r1) and c2 announced (intent i-t2 reserving r2, open).
func invalidFixture(t *testing.T) (*session.Session, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	c1, c2 := &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{}`}, &llm.ToolCall{ID: "c2", Name: "read", Arguments: `{}`}
	a1 := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Call(c1.ID, c1.Name, c1.Arguments), llm.Call(c2.ID, c2.Name, c2.Arguments)},
		StopReason: llm.StopToolUse}
	steps := []func() error{
		s.BeginRun,
		func() error {
			return s.Settle(ctx, kernel.Settlement{Entries: []kernel.Entry{{ID: "u1", Message: llm.UserText("go")}}})
		},
		func() error {
			return s.Intend(ctx, kernel.Intent{ID: "i-m1", Kind: kernel.IntentModelCall, Turn: 1, Reserved: []string{"a1"}})
		},
		func() error {
			return s.Settle(ctx, kernel.Settlement{IntentID: "i-m1", Entries: []kernel.Entry{{ID: "a1", Message: a1}}})
		},
		func() error {
			return s.Intend(ctx, kernel.Intent{ID: "i-t1", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r1"}, Call: c1})
		},
		func() error {
			return s.Settle(ctx, kernel.Settlement{IntentID: "i-t1", Entries: []kernel.Entry{{ID: "r1", Message: llm.ToolResultText(c1, "one", false)}}})
		},
		func() error {
			return s.Intend(ctx, kernel.Intent{ID: "i-t2", Kind: kernel.IntentToolCall, Turn: 1, Reserved: []string{"r2"}, Call: c2, Index: 1})
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("fixture step %d: %v", i, err)
		}
	}
	return s, dir
}

// TestInvalidRecordsAreRefusedBeforeTheyAreWritten: every write the session's rules would refuse
// on open is refused by the write itself with ErrInvalidRecord; the ledger's bytes are
// unchanged, the session goes on, and it still verifies and reopens.
func TestInvalidRecordsAreRefusedBeforeTheyAreWritten(t *testing.T) {
	ctx := context.Background()
	c1 := &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{}`}
	c2 := &llm.ToolCall{ID: "c2", Name: "read", Arguments: `{}`}
	result := func(id string, c *llm.ToolCall) kernel.Entry {
		return kernel.Entry{ID: id, Message: llm.ToolResultText(c, "x", false)}
	}
	settle := func(intent string, es ...kernel.Entry) func(*session.Session) error {
		return func(s *session.Session) error { return s.Settle(ctx, kernel.Settlement{IntentID: intent, Entries: es}) }
	}
	intend := func(in kernel.Intent) func(*session.Session) error {
		return func(s *session.Session) error { return s.Intend(ctx, in) }
	}
	compactionIntent := intend(kernel.Intent{ID: "i-c", Kind: kernel.IntentCompaction, Turn: 2, Reserved: []string{"k1"}})
	compaction := func(first string, m llm.Message) func(*session.Session) error {
		return settle("i-c", kernel.Entry{ID: "k1", Message: m, Compaction: &kernel.CompactionInfo{FirstKeptID: first, TokensBefore: 9}})
	}
	cases := []struct {
		name  string
		write func(*session.Session) error
		// prep runs (valid) before the ledger's bytes are taken.
		prep func(*session.Session) error
	}{
		{name: "settlement of an unknown intent", write: settle("i-nope", result("x1", c2))},
		{name: "entry id its intent did not reserve", write: settle("i-t2", result("r9", c2))},
		{name: "entry id another intent reserved", write: settle("", kernel.Entry{ID: "r2", Message: llm.UserText("mine")})},
		{name: "second settlement of a settled intent", write: settle("i-t1", result("r1b", c1))},
		{name: "second result for a call", write: settle("", result("x2", c1))},
		{name: "result for an unknown call", write: settle("", result("x3", &llm.ToolCall{ID: "c9", Name: "read"}))},
		{name: "duplicate entry id", write: settle("", kernel.Entry{ID: "u1", Message: llm.UserText("again")})},
		{name: "entry id that is an intent's id", write: settle("", kernel.Entry{ID: "i-t1", Message: llm.UserText("again")})},
		{name: "entry with an unknown role", write: settle("", kernel.Entry{ID: "x5", Message: llm.Message{Role: "system"}})},
		{name: "closing an intent that is settled", write: settle("i-t1")},
		{name: "closing an unknown intent", write: settle("i-nope")},
		{name: "settling a closed intent", prep: settle("i-t2"), write: settle("i-t2", result("r2", c2))},
		{name: "intent reserving an entry's id", write: intend(kernel.Intent{ID: "i-x", Kind: kernel.IntentModelCall, Reserved: []string{"a1"}})},
		{name: "intent reserving an id another intent reserved", write: intend(kernel.Intent{ID: "i-x", Kind: kernel.IntentModelCall, Reserved: []string{"r2"}})},
		{name: "intent reserving nothing", write: intend(kernel.Intent{ID: "i-x", Kind: kernel.IntentModelCall})},
		{name: "tool intent without its call", write: intend(kernel.Intent{ID: "i-x", Kind: kernel.IntentToolCall, Reserved: []string{"x6"}})},
		{name: "intent of an unknown kind", write: intend(kernel.Intent{ID: "i-x", Kind: "telepathy", Reserved: []string{"x6"}})},
		{name: "duplicate intent id", write: intend(kernel.Intent{ID: "i-t1", Kind: kernel.IntentModelCall, Reserved: []string{"x6"}})},
		{name: "compaction keeping from an entry off the path", prep: compactionIntent, write: compaction("r1", llm.UserText("summary"))},
		{name: "compaction summary that is not a user message", prep: compactionIntent, write: compaction("u1", llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("s")}})},
		{name: "answered assistant message with two calls of one id", write: settle("", kernel.Entry{ID: "a2", Message: llm.Message{Role: llm.RoleAssistant,
			Content: []llm.Part{llm.Call("d1", "read", `{}`), llm.Call("d1", "read", `{}`)}, StopReason: llm.StopToolUse}})},
		{name: "answered assistant message with a call without id", write: settle("", kernel.Entry{ID: "a2", Message: llm.Message{Role: llm.RoleAssistant,
			Content: []llm.Part{llm.Call("", "read", `{}`)}, StopReason: llm.StopToolUse}})},
		// One settlement is one unit: its valid first entry is not written either.
		{name: "settlement with a valid then an invalid entry", write: settle("",
			kernel.Entry{ID: "q1", Message: llm.UserText("queued")}, result("x7", &llm.ToolCall{ID: "c9", Name: "read"}))},
		{name: "settlement with a valid result then a second one for the same call", write: settle("i-t2", result("r2", c2), result("x8", c2))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkRefused(t, tc.prep, tc.write) })
	}
}

// checkRefused runs prep and then write on a fresh fixture and checks that write is refused
// with ErrInvalidRecord, that nothing reached the ledger, and that the session goes on,
// verifies and reopens.
func checkRefused(t *testing.T, prep, write func(*session.Session) error) {
	s, dir := invalidFixture(t)
	if prep != nil {
		if err := prep(s); err != nil {
			t.Fatalf("prep: %v", err)
		}
	}
	path := filepath.Join(dir, ledger.FileName)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctxBefore := s.Context()
	err = write(s)
	if !errors.Is(err, session.ErrInvalidRecord) {
		t.Fatalf("write: %v, want ErrInvalidRecord", err)
	}
	if errors.Is(err, ledger.ErrCorrupt) || errors.Is(err, ledger.ErrFaulted) {
		t.Errorf("a refusal reads as a broken ledger: %v", err)
	}
	t.Logf("refused: %v", err)
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("the refused record reached the ledger:\n%s", after[len(before):])
	}
	if diff := cmp.Diff(ctxBefore, s.Context()); diff != "" {
		t.Errorf("the refusal changed the session's context:\n%s", diff)
	}
	for _, id := range []string{"q1", "x1", "x7", "k1"} {
		if s.Has(id) {
			t.Errorf("refused id %s is in the state", id)
		}
	}
	// The session goes on: valid writes after the refusal are recorded.
	if err := s.SetFact("after", "refusal"); err != nil {
		t.Fatalf("write after the refusal: %v", err)
	}
	if err := s.EndRun("completed"); err != nil {
		t.Fatalf("end run after the refusal: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Verify(dir, ledger.Options{}); err != nil {
		t.Fatalf("verify: %v", err)
	}
	s2, _, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	if diff := cmp.Diff(ctxBefore, s2.Context()); diff != "" {
		t.Errorf("the reopened context differs:\n%s", diff)
	}
	if s2.Fact("after") != "refusal" {
		t.Errorf("the write after the refusal was lost")
	}
}

// badRecorder passes a tool-call intent to the session with its reserved id replaced by one the
// session already holds: a kernel bug the session must catch.
type badRecorder struct {
	*session.Session
	taken string
}

func (b *badRecorder) Intend(ctx context.Context, in kernel.Intent) error {
	if in.Kind == kernel.IntentToolCall {
		in.Reserved = []string{b.taken}
	}
	return b.Session.Intend(ctx, in)
}

type countingTool struct{ runs *atomic.Int32 }

func (countingTool) Spec() tool.Spec {
	return tool.Spec{Name: "count", Description: "counts its runs", Replay: tool.ReplayNever,
		Schema: []byte(`{"type":"object","additionalProperties":false}`)}
}

func (c countingTool) Run(context.Context, tool.Call) (tool.Result, error) {
	c.runs.Add(1)
	return tool.TextResult("counted"), nil
}

// TestKernelStopsOnARefusedRecord: a refused intent stops the run before its effect, with an
// error that keeps ErrInvalidRecord, and the session reopens and recovers.
func TestKernelStopsOnARefusedRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := session.Create(dir, session.Meta{ID: "s"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Settle(context.Background(), kernel.Settlement{Entries: []kernel.Entry{{ID: "u0", Message: llm.UserText("earlier")}}}); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	set, _ := tool.New(countingTool{&runs})
	model := scriptModel(t, "version: 1\nturns:\n  - {calls: [{name: count, id: k1, args: {}}]}\n  - {text: done}\n")
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: &badRecorder{Session: s, taken: "u0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(context.Background(), s.Context(), llm.UserText("go"))
	if _, ok := errors.AsType[*kernel.RecordError](err); !ok || !errors.Is(err, session.ErrInvalidRecord) {
		t.Fatalf("run: %v, want a RecordError wrapping ErrInvalidRecord", err)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times after its intent was refused", n)
	}
	s.Close()
	s2, _, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	done, err := s2.Recover(context.Background(), nil)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	if len(done) != 2 || done[0].Action != session.NotStarted || done[1].Action != session.RunClosed {
		t.Errorf("recovery did %v, want the call settled as not started and the run closed", done)
	}
}

func scriptModel(t *testing.T, scenario string) llm.Model {
	t.Helper()
	m, err := script.Parse([]byte(scenario), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
