package kernel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// earlyLog is a recorder with the EarlyRecorder capability: a model-call intent is written at
// once and becomes durable when release is closed, with err.
type earlyLog struct {
	kernel.Memory
	release chan struct{}
	err     error
	early   int
}

func (l *earlyLog) IntendEarly(ctx context.Context, in kernel.Intent) (func() error, error) {
	l.early++
	if err := l.Memory.Intend(ctx, in); err != nil {
		return nil, err
	}
	return func() error { <-l.release; return l.err }, nil
}

// gatedModel answers once its call's send gate lets it, as rein's adapters send.
func gatedModel(answered *sync.WaitGroup) llm.Model {
	return llm.ModelFunc(func(ctx context.Context, _ *llm.Request, emit func(llm.Event)) *llm.Message {
		if err := llm.AwaitSend(ctx); err != nil {
			return llm.Fail(&llm.Message{}, llm.TransportError(ctx, err))
		}
		defer answered.Done()
		return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hi")}, StopReason: llm.StopEnd}
	})
}

// A send-gated model call is sent only once its intent is durable, and the intent's
// session_write comes before the model's message, as without the capability.
func TestEarlyIntentGatesTheRequest(t *testing.T) {
	set, _ := tool.New()
	rec := &earlyLog{release: make(chan struct{})}
	var answered sync.WaitGroup
	answered.Add(1)
	var mu sync.Mutex
	var events []kernel.Event
	a, err := kernel.New(kernel.Config{Model: gatedModel(&answered), Tools: set, Recorder: rec, SendGated: true,
		Observe: func(ev kernel.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := a.Run(context.Background(), nil, llm.UserText("hello")); done <- err }()
	sent := make(chan struct{})
	go func() { answered.Wait(); close(sent) }()
	select {
	case <-sent:
		t.Fatal("the model answered before its intent was durable")
	case <-time.After(50 * time.Millisecond):
	}
	close(rec.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rec.early != 1 {
		t.Errorf("IntendEarly was called %d times, want 1", rec.early)
	}
	wrote, started := -1, -1
	for i, ev := range events {
		if ev.Type == kernel.EventSessionWrite && ev.Write.Kind == kernel.WriteIntent && ev.Write.IntentKind == kernel.IntentModelCall && wrote < 0 {
			wrote = i
		}
		if ev.Type == kernel.EventMessageStart && ev.Message.Role == llm.RoleAssistant && started < 0 {
			started = i
		}
	}
	if wrote < 0 || started < 0 || wrote > started {
		t.Errorf("the intent's session_write at %d, the answer's message_start at %d: want the write first", wrote, started)
	}
}

// An intent that cannot be made durable ends the run with a RecordError; nothing was sent.
func TestEarlyIntentNotDurableSendsNothing(t *testing.T) {
	set, _ := tool.New()
	rec := &earlyLog{release: make(chan struct{}), err: errors.New("fsync: input/output error")}
	close(rec.release)
	var answered sync.WaitGroup
	answered.Add(1)
	a, err := kernel.New(kernel.Config{Model: gatedModel(&answered), Tools: set, Recorder: rec, SendGated: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(context.Background(), nil, llm.UserText("hello"))
	if _, ok := errors.AsType[*kernel.RecordError](err); !ok || !errors.Is(err, rec.err) {
		t.Fatalf("run: %v, want a RecordError wrapping the fsync error", err)
	}
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok && s.IntentID != "" {
			t.Errorf("a settlement was recorded for an intent that never became durable: %+v", s)
		}
	}
}

// Without SendGated (a given adapter that may not ask the gate) the capability is not used.
func TestEarlyIntentNeedsSendGated(t *testing.T) {
	set, _ := tool.New()
	rec := &earlyLog{release: make(chan struct{})}
	var answered sync.WaitGroup
	answered.Add(1)
	a, err := kernel.New(kernel.Config{Model: gatedModel(&answered), Tools: set, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("hello")); err != nil {
		t.Fatal(err)
	}
	if rec.early != 0 {
		t.Errorf("IntendEarly was called %d times without SendGated", rec.early)
	}
}
