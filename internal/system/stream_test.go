package system

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// partial is text only a cut stream carries: it must never become an answer, a context
// message or part of a later request.
const partial = "The answer is forty"

// cutStream is the chat stream of the issue: two content chunks, then the body ends — no
// finish_reason, no [DONE], no connection error.
var cutStream = ct.Role + ct.Content("The answer ") + ct.Content("is forty")

// scriptedChat serves the chat bodies in order (the last one again once they run out) and
// records every request body.
func scriptedChat(t *testing.T, bodies ...string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(got)
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, bodies[min(n, len(bodies)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func chatRuntime(t *testing.T, url string, attempts int) *Runtime {
	t.Helper()
	o := Options{Provider: llm.ProviderOpenAICompat, Model: "qwen", BaseURL: url, Dir: realDir(t), Home: t.TempDir(),
		Getenv: env(nil), NoTools: true, Session: SessionChoice{Mode: SessionNew},
		Retry: llm.RetryPolicy{MaxAttempts: attempts, BaseDelay: time.Millisecond}}
	rt, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// noPartial fails when the partial text is in the session's context other than on a failed
// message (kept for the record; adapters drop failed messages from requests).
func noPartial(t *testing.T, rt *Runtime) {
	t.Helper()
	for _, m := range rt.Session.Context() {
		if strings.Contains(m.Text(), partial) && !m.Failed() {
			t.Errorf("the session's context holds the cut stream's text as an answer: %+v", m)
		}
	}
}

// TestCutStreamIsRetriedAndOnlyTheCompleteAnswerKept: the first response is cut mid-text,
// the retry completes. The run's answer, the session's context and everything under the
// session directory hold only the complete answer; the next request carries it and nothing of
// the cut one.
func TestCutStreamIsRetriedAndOnlyTheCompleteAnswerKept(t *testing.T) {
	complete := ct.SSE(ct.Role, ct.Content("The answer "), ct.Content("is 42."), ct.Finish("stop"), ct.Usage(10, 4, 0))
	srv, requests := scriptedChat(t, cutStream, complete)
	rt := chatRuntime(t, srv.URL, 3)
	out, err := rt.Run(context.Background(), llm.UserText("What is the answer?"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Final == nil || out.Final.Failed() || out.Final.Text() != "The answer is 42." {
		t.Fatalf("final = %+v, want the complete answer", out.Final)
	}
	if n := len(requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (the cut one and its retry)", n)
	}
	var answers []string
	for _, m := range rt.Session.Context() {
		if m.Role == llm.RoleAssistant {
			answers = append(answers, m.Text())
		}
	}
	if len(answers) != 1 || answers[0] != "The answer is 42." {
		t.Errorf("assistant messages in the session's context: %q, want only the complete answer", answers)
	}
	for _, m := range rt.Session.Context() {
		if strings.Contains(m.Text(), partial) {
			t.Errorf("the session's context holds the cut stream's text: %+v", m)
		}
	}
	err = filepath.WalkDir(rt.Session.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), partial) {
			t.Errorf("%s holds the cut stream's text", path)
		}
		return err
	})
	must(t, err)

	if _, err := rt.Run(context.Background(), llm.UserText("And again?")); err != nil {
		t.Fatal(err)
	}
	next := requests()[2]
	if !strings.Contains(next, "The answer is 42.") || strings.Contains(next, partial) {
		t.Errorf("the next request does not carry exactly the complete answer:\n%s", next)
	}
}

// TestCutStreamsGiveUpAsAFailure: when every attempt is cut, the run fails with a retryable
// incomplete_stream error, the partial message is recorded failed — never the answer — and
// the next request does not carry it.
func TestCutStreamsGiveUpAsAFailure(t *testing.T) {
	complete := ct.SSE(ct.Role, ct.Content("Fine."), ct.Finish("stop"))
	srv, requests := scriptedChat(t, cutStream, cutStream, complete)
	rt := chatRuntime(t, srv.URL, 2)
	out, err := rt.Run(context.Background(), llm.UserText("What is the answer?"))
	var me *kernel.ModelError
	if !errors.As(err, &me) || me.Err.Kind != llm.KindIncompleteStream || !me.Err.Retryable {
		t.Fatalf("err = %v, want a model error of kind incomplete_stream", err)
	}
	if out == nil || out.Final == nil || !out.Final.Failed() {
		t.Fatalf("final = %+v, want the failed partial message", out)
	}
	noPartial(t, rt)
	if _, err := rt.Run(context.Background(), llm.UserText("Try again.")); err != nil {
		t.Fatal(err)
	}
	got := requests()
	if len(got) != 3 || strings.Contains(got[2], partial) {
		t.Errorf("%d requests; the last carries the cut stream's text: %v", len(got), strings.Contains(got[len(got)-1], partial))
	}
}

// TestStreamIdleTimeoutReachesEveryProvider: Options.StreamIdleTimeout bounds the wait for
// the response headers of every network provider.
func TestStreamIdleTimeoutReachesEveryProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client hanging up
		select {                    // never answer, until the client gives up
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
			t.Error("the client never gave up")
		}
	}))
	t.Cleanup(srv.Close)
	for _, provider := range []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat} {
		t.Run(provider, func(t *testing.T) {
			o := Options{Provider: provider, APIKey: "k", Model: "qwen", BaseURL: srv.URL, Dir: realDir(t), Home: t.TempDir(),
				Getenv: env(nil), NoTools: true, Session: SessionChoice{Mode: SessionNone},
				Retry: llm.RetryPolicy{MaxAttempts: 1}, StreamIdleTimeout: 50 * time.Millisecond}
			if provider != llm.ProviderOpenAICompat {
				o.Model = ""
			}
			rt, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			_, err = rt.Run(context.Background(), llm.UserText("hi"))
			var me *kernel.ModelError
			if !errors.As(err, &me) || me.Err.Kind != llm.KindTimeout || !me.Err.Retryable {
				t.Fatalf("err = %v, want a retryable timeout", err)
			}
		})
	}
}
