package system

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// connServer is a chat server that reports the connections it accepts and sees closed.
func connServer(t *testing.T) (srv *httptest.Server, accepted, closed chan struct{}, conns *atomic.Int32) {
	t.Helper()
	accepted, closed, conns = make(chan struct{}, 16), make(chan struct{}, 16), new(atomic.Int32)
	answer := ct.SSE(ct.Role, ct.Content("done"), ct.Finish("stop"), ct.Usage(3, 1, 0))
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			conns.Add(1)
			accepted <- struct{}{}
		case http.StateClosed:
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, accepted, closed, conns
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// TestBuildOpensTheProviderConnectionForTheFirstRequest: with rein's own HTTP client, Build
// has the provider's connection opened before any request, and the run's request uses it.
func TestBuildOpensTheProviderConnectionForTheFirstRequest(t *testing.T) {
	srv, accepted, _, conns := connServer(t)
	rt := chatRuntime(t, srv.URL+"/v1", 1)
	waitFor(t, accepted, "connection opened by Build")
	out, err := rt.Run(context.Background(), llm.UserText("hello"))
	if err != nil || out.Final == nil || out.Final.Text() != "done" {
		t.Fatalf("run: %+v, %v", out.Final, err)
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("the provider accepted %d connections, want 1 (the one opened by Build)", got)
	}
}

// TestCloseBeforeAnyRequestClosesTheProviderConnection: a runtime closed before its first
// request leaves no connection open.
func TestCloseBeforeAnyRequestClosesTheProviderConnection(t *testing.T) {
	srv, accepted, closed, _ := connServer(t)
	rt := chatRuntime(t, srv.URL+"/v1", 1)
	waitFor(t, accepted, "connection opened by Build")
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, closed, "close of the unused connection")
}

// TestInjectedHTTPClientIsNotPreDialed: a caller's own client gets no connection from Build.
func TestInjectedHTTPClientIsNotPreDialed(t *testing.T) {
	srv, _, _, conns := connServer(t)
	o := Options{Provider: llm.ProviderOpenAICompat, Model: "qwen", BaseURL: srv.URL + "/v1", Dir: realDir(t),
		Home: t.TempDir(), Getenv: env(nil), NoTools: true, HTTPClient: &http.Client{}}
	rt, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rt.predial != nil {
		t.Error("Build pre-dialed for an injected HTTP client")
	}
	rt.Close()
	if conns.Load() != 0 {
		t.Errorf("the provider accepted %d connections, want none", conns.Load())
	}
}
