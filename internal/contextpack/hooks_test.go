package contextpack_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/tool"
)

// TestCutAtPrefixKeepsEarlierTextOffTheWire runs the kernel against an httptest server that
// speaks the Anthropic wire format and checks every request body it receives: text placed before
// the latest prefixed user message never reaches the provider, though it stays in the history.
func TestCutAtPrefixKeepsEarlierTextOffTheWire(t *testing.T) {
	sse, err := os.ReadFile("../llm/anthropic/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer srv.Close()
	model := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
	set, _ := tool.New()
	const prefix = "[[stage request]]"
	history := []llm.Message{
		llm.UserText("an earlier request holding TOP-SECRET-EARLIER details"),
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("reply mentioning TOP-SECRET-REPLY")}, StopReason: llm.StopEnd},
		llm.UserText(prefix + " first stage"),
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("stage reply with STALE-STAGE text")}, StopReason: llm.StopEnd},
	}
	for _, tc := range []struct {
		hooks  []kernel.ContextHook
		prompt string
		leak   bool
	}{
		{nil, prefix + " second stage", true},
		{[]kernel.ContextHook{contextpack.CutAtPrefix{Prefix: prefix}}, prefix + " second stage", false},
	} {
		bodies = nil
		rec := &kernel.Memory{}
		a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec, ContextHooks: tc.hooks})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(context.Background(), history, llm.UserText(tc.prompt)); err != nil {
			t.Fatal(err)
		}
		if len(bodies) != 1 {
			t.Fatalf("%d requests", len(bodies))
		}
		leaked := false
		for _, secret := range []string{"TOP-SECRET-EARLIER", "TOP-SECRET-REPLY", "STALE-STAGE"} {
			leaked = leaked || strings.Contains(bodies[0], secret)
		}
		if leaked != tc.leak {
			t.Errorf("hooks=%v: earlier text in the request body = %v, want %v\n%s", tc.hooks, leaked, tc.leak, bodies[0])
		}
		if !strings.Contains(bodies[0], "second stage") {
			t.Errorf("the request lost the current prompt:\n%s", bodies[0])
		}
	}
}

// TestCutAtPrefixFailsClosed runs the kernel against an httptest server that counts the
// requests it receives: when no user message carries the prefix, the hook refuses, the run
// fails with ErrPrefixMissing and the provider receives nothing.
func TestCutAtPrefixFailsClosed(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		http.Error(w, "no request was expected", http.StatusTeapot)
	}))
	defer srv.Close()
	model := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
	set, _ := tool.New()
	history := []llm.Message{llm.UserText("an earlier request holding TOP-SECRET-EARLIER details")}
	for _, prefix := range []string{"[[stage request]]", ""} {
		rec := &kernel.Memory{}
		a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: rec,
			ContextHooks: []kernel.ContextHook{contextpack.CutAtPrefix{Prefix: prefix}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Run(context.Background(), history, llm.UserText("a prompt without the prefix"))
		if !errors.Is(err, contextpack.ErrPrefixMissing) {
			t.Errorf("prefix %q: run error = %v, want ErrPrefixMissing", prefix, err)
		}
		mu.Lock()
		if requests != 0 {
			t.Errorf("prefix %q: the provider received %d requests, want none", prefix, requests)
		}
		mu.Unlock()
	}
}
