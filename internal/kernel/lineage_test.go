package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// vouching passes requests to next and fails the test when one's lineage vouches for a
// message that changed: it keeps the encoding of every message each lineage sent and compares
// the messages of every later request of the lineage with it. scenario wraps every scripted
// model in one, so every kernel test checks the promise.
type vouching struct {
	t    testing.TB
	next llm.Model
	mu   sync.Mutex
	sent map[*llm.Lineage][]string
}

func (v *vouching) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
	if req.Lineage != nil {
		v.check(req)
	}
	return v.next.Stream(ctx, req, emit)
}

func (v *vouching) check(req *llm.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.sent == nil {
		v.sent = map[*llm.Lineage][]string{}
	}
	seen := v.sent[req.Lineage]
	for i := range req.Messages {
		m := req.Messages[i]
		b, err := json.Marshal(m)
		if err != nil {
			v.t.Fatal(err)
		}
		enc := string(b) + "\x00" + m.ID
		switch {
		case i >= len(seen):
			seen = append(seen, enc)
		case seen[i] != enc:
			v.t.Errorf("a request's lineage vouches for message %d, which changed since an earlier request of it:\n was %s\n now %s", i, seen[i], enc)
		}
	}
	v.sent[req.Lineage] = seen
}

// lineages runs yaml's turns on an agent with cfg and returns the lineage of each request.
func lineages(t *testing.T, yaml string, cfg kernel.Config) []*llm.Lineage {
	t.Helper()
	var got []*llm.Lineage
	model := scenario(t, yaml)
	cfg.Model = llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		got = append(got, req.Lineage)
		return model.Stream(ctx, req, emit)
	})
	cfg.Tools, cfg.Recorder = mustSet(t, &probe{name: "p"}), &kernel.Memory{}
	a, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	return got
}

const threeCallsThenDone = `
version: 1
turns:
  - calls: [{name: p, id: c1, args: {n: 1}}]
  - calls: [{name: p, id: c2, args: {n: 2}}]
  - calls: [{name: p, id: c3, args: {n: 3}}]
  - text: done
`

// editInPlace is a context hook that breaks its contract: it edits the first message of the
// context in place on every request after the second.
type editInPlace struct{ calls int }

func (h *editInPlace) Context(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	if h.calls++; h.calls > 2 {
		msgs[0].Content[0].Text = fmt.Sprintf("EDITED %d", h.calls)
	}
	return msgs, nil
}

// hooksWithoutHas is a Hooks that cannot say which points it serves.
type hooksWithoutHas struct{}

func (hooksWithoutHas) Run(context.Context, hooks.Event) error { return nil }

func TestRequestsCarryALineageOnlyWhileTheContextOnlyGrows(t *testing.T) {
	t.Run("no hooks: one lineage for the run", func(t *testing.T) {
		got := lineages(t, threeCallsThenDone, kernel.Config{})
		if len(got) != 4 || got[0] == nil {
			t.Fatalf("lineages %v", got)
		}
		for i, l := range got {
			if l != got[0] {
				t.Fatalf("request %d: lineage %p, want the run's %p", i+1, l, got[0])
			}
		}
		if again := lineages(t, threeCallsThenDone, kernel.Config{}); again[0] == got[0] {
			t.Fatal("two runs share a lineage")
		}
	})
	only := func(p hooks.Point) *hooks.Registry {
		reg := hooks.New(hooks.Options{})
		switch p {
		case hooks.PointBeforeTool:
			hooks.On(reg, "x", func(context.Context, *hooks.BeforeTool) error { return nil })
		case hooks.PointBeforeProviderRequest:
			hooks.On(reg, "x", func(context.Context, *hooks.BeforeProviderRequest) error { return nil })
		case hooks.PointTurnEnd:
			hooks.On(reg, "x", func(context.Context, *hooks.TurnEnd) error { return nil })
		case hooks.PointContext:
			reg.ContextHook("x", &editInPlace{})
		}
		return reg
	}
	for _, tc := range []struct {
		name string
		cfg  kernel.Config
		want bool
	}{
		{"a context hook that edits in place", kernel.Config{ContextHooks: []kernel.ContextHook{&editInPlace{}}}, false},
		{"a registry's context hook", kernel.Config{Hooks: only(hooks.PointContext)}, false},
		{"a before_provider_request hook", kernel.Config{Hooks: only(hooks.PointBeforeProviderRequest)}, false},
		{"a turn_end hook", kernel.Config{Hooks: only(hooks.PointTurnEnd)}, false},
		{"hooks that cannot say their points", kernel.Config{Hooks: hooksWithoutHas{}}, false},
		{"only a before_tool hook", kernel.Config{Hooks: only(hooks.PointBeforeTool)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lineages(t, threeCallsThenDone, tc.cfg)
			for i, l := range got {
				if (l != nil) != tc.want || l != got[0] {
					t.Fatalf("request %d: lineage %p (first %p), want set: %v", i+1, l, got[0], tc.want)
				}
			}
		})
	}
}

func TestCompactionStartsANewLineage(t *testing.T) {
	var got []*llm.Lineage
	model := scenario(t, compactScenario)
	spy := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		if len(req.Tools) > 0 {
			got = append(got, req.Lineage)
		} else if req.Lineage != nil {
			t.Error("a summarization request carries a lineage")
		}
		return model.Stream(ctx, req, emit)
	})
	comp := &contextpack.Compactor{Model: model, ContextWindow: 450, Reserve: 100, KeepRecent: 30}
	a, err := kernel.New(kernel.Config{Model: spy, Tools: mustSet(t, &probe{name: "p"}), Recorder: &kernel.Memory{}, Compactor: comp, MaxTurns: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("write things")); err != nil {
		t.Fatal(err)
	}
	distinct := map[*llm.Lineage]bool{}
	for i, l := range got {
		if l == nil {
			t.Fatalf("request %d has no lineage", i+1)
		}
		distinct[l] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("%d requests, %d lineages: a compaction kept the lineage", len(got), len(distinct))
	}
}

// TestInPlaceEditReachesTheWire runs the agent on the Chat Completions adapter (its message
// cache trusts a lineage) against a server, with a context hook that edits the first message in
// place from the third request on: every body the server gets carries the message as the hook
// left it.
func TestInPlaceEditReachesTheWire(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n <= 4 {
			_, _ = io.WriteString(w, ct.CallStart(0, fmt.Sprintf("call_%d", n), "p")+ct.CallArgs(0, `{"n":1}`)+ct.Finish("tool_calls")+ct.Done)
			return
		}
		_, _ = io.WriteString(w, ct.Content("done")+ct.Finish("stop")+ct.Done)
	}))
	defer srv.Close()
	model, err := openaicompat.New(openaicompat.Config{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	a, err := kernel.New(kernel.Config{Model: model, Tools: mustSet(t, &probe{name: "p"}), Recorder: &kernel.Memory{},
		ContextHooks: []kernel.ContextHook{&editInPlace{}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("the original prompt")); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 5 {
		t.Fatalf("%d requests, want 5", len(bodies))
	}
	for i, b := range bodies {
		want := "the original prompt"
		if i >= 2 {
			want = fmt.Sprintf("EDITED %d", i+1)
		}
		if !strings.Contains(b, `"content":"`+want+`"`) {
			t.Errorf("request %d does not carry the first message as the hook left it (%q): %.300s", i+1, want, b)
		}
	}
}
