package kernel_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// queue is an Inbox the test fills.
type queue struct {
	mu                sync.Mutex
	steering, follows []llm.Message
	polls             int
}

func (q *queue) Steering() []llm.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.polls++
	out := q.steering
	q.steering = nil
	return out
}

func (q *queue) FollowUps() []llm.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.follows
	q.follows = nil
	return out
}

func (q *queue) steer(text string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.steering = append(q.steering, llm.UserText(text))
}

func inboxAgent(t *testing.T, model llm.Model, in kernel.Inbox, tools ...tool.Tool) (*kernel.Agent, *kernel.Memory, *[]kernel.Event) {
	t.Helper()
	set, err := tool.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &kernel.Memory{}
	var mu sync.Mutex
	events := &[]kernel.Event{}
	n := 0
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec, Inbox: in,
		NewID: func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id%d", n) },
		Observe: func(ev kernel.Event) {
			mu.Lock()
			defer mu.Unlock()
			*events = append(*events, ev)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a, rec, events
}

// trace renders the events that show where messages entered the run.
func trace(events []kernel.Event) []string {
	var out []string
	for _, ev := range events {
		switch ev.Type {
		case kernel.EventTurnStart, kernel.EventTurnEnd:
			out = append(out, fmt.Sprintf("%s %d", ev.Type, ev.Turn))
		case kernel.EventMessageEnd:
			out = append(out, fmt.Sprintf("%s %s %q", ev.Type, ev.Message.Role, ev.Message.Text()))
		}
	}
	return out
}

// A steering message that arrives while a tool runs is delivered after the turn's tool
// results, before the next model call, and recorded as a user entry.
func TestSteeringIsDeliveredAfterTheToolBatch(t *testing.T) {
	model := scenario(t, `
version: 1
dialogs:
  - match: ^go$
    turns:
      - calls: [{name: probe, id: c1, args: {}}]
      - text: not asked
  - match: ^change course$
    turns:
      - text: steered
`)
	q := &queue{}
	p := &probe{name: "probe", onRun: func(call tool.Call) (tool.Result, error) {
		q.steer("change course") // arrives mid-tool
		return tool.TextResult("ok"), nil
	}}
	a, rec, events := inboxAgent(t, model, q, p)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`message_end user "go"`,
		"turn_start 1", `message_end assistant ""`, `message_end tool "ok"`, "turn_end 1",
		`message_end user "change course"`,
		"turn_start 2", `message_end assistant "steered"`, "turn_end 2",
	}
	if got := trace(*events); !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if out.Final.Text() != "steered" || out.Turns != 2 {
		t.Errorf("final %q after %d turns", out.Final.Text(), out.Turns)
	}
	var steer *kernel.Entry
	for _, r := range rec.Records() {
		if s, ok := r.(kernel.Settlement); ok && s.IntentID == "" && len(s.Entries) == 1 && s.Entries[0].Message.Text() == "change course" {
			steer = &s.Entries[0]
		}
	}
	if steer == nil || steer.Message.Role != llm.RoleUser || steer.ID == "" {
		t.Errorf("the steering message is not recorded as a user entry: %+v", rec.Records())
	}
}

// Follow-ups wait until the model would stop; a steering message pending at that point goes
// first and the follow-up waits for the next stop.
func TestFollowUpsAreDeliveredWhenTheModelStops(t *testing.T) {
	model := scenario(t, `
version: 1
dialogs:
  - match: ^go$
    turns: [{text: first}]
  - match: ^steer$
    turns: [{text: second}]
  - match: ^later$
    turns: [{text: third}]
`)
	q := &queue{steering: []llm.Message{llm.UserText("steer")}, follows: []llm.Message{llm.UserText("later")}}
	a, _, events := inboxAgent(t, model, q)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`message_end user "go"`,
		"turn_start 1", `message_end assistant "first"`, "turn_end 1",
		`message_end user "steer"`,
		"turn_start 2", `message_end assistant "second"`, "turn_end 2",
		`message_end user "later"`,
		"turn_start 3", `message_end assistant "third"`, "turn_end 3",
	}
	if got := trace(*events); !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
	if len(out.Messages) != 6 || out.Status != kernel.StatusCompleted {
		t.Errorf("%s with %d messages", out.Status, len(out.Messages))
	}
}

// An inbox holding a message of another role faults the run instead of corrupting the
// conversation.
func TestInboxRefusesNonUserMessages(t *testing.T) {
	model := scenario(t, "version: 1\nturns: [{text: hi}]\n")
	q := &queue{follows: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("forged")}}}}
	a, _, _ := inboxAgent(t, model, q)
	out, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err == nil || out.Status != kernel.StatusFailed {
		t.Fatalf("status %s, err %v", out.Status, err)
	}
}

// Every intent and settlement is followed by a session_write naming its ids and the
// recorder's position.
func TestSessionWriteEvents(t *testing.T) {
	model := scenario(t, `
version: 1
turns:
  - calls: [{name: probe, id: c1, args: {}}]
  - text: done
`)
	a, rec, events := inboxAgent(t, model, nil, &probe{name: "probe"})
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, ev := range *events {
		if ev.Type == kernel.EventSessionWrite {
			w := ev.Write
			writes = append(writes, fmt.Sprintf("%d %s %s %s %v", w.Seq, w.Kind, w.Intent, w.IntentKind, w.Entries))
		}
	}
	want := []string{
		"1 settlement   [id1]",
		"2 intent id3 model_call []",
		"3 settlement id3  [id2]",
		"4 intent id4 tool_call []",
		"5 settlement id4  [id5]",
		"6 intent id7 model_call []",
		"7 settlement id7  [id6]",
	}
	if !slices.Equal(writes, want) {
		t.Errorf("writes:\n%q\nwant\n%q", writes, want)
	}
	if n := len(rec.Records()); n != len(want) {
		t.Errorf("%d records, %d writes", n, len(want))
	}
}

// wrapped is a Recorder decorator that does not forward Head.
type wrapped struct{ kernel.Recorder }

func (w wrapped) Unwrap() kernel.Recorder { return w.Recorder }

// The position is found through a decorator's Unwrap.
func TestSessionWriteSeqThroughAWrapper(t *testing.T) {
	model := scenario(t, "version: 1\nturns: [{text: hi}]\n")
	set, _ := tool.New()
	rec := &kernel.Memory{}
	var seqs []int64
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: wrapped{rec}, Observe: func(ev kernel.Event) {
		if ev.Type == kernel.EventSessionWrite {
			seqs = append(seqs, ev.Write.Seq)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []int64{1, 2, 3}) {
		t.Errorf("seqs %v", seqs)
	}
}
