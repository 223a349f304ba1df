package cli_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestInspectionOpensNoConnection: `rein context` shows what a request would carry without
// calling a model, so it opens no connection to the provider either (a run opens one while it
// starts, for its first request; the control below shows that the server would see it).
func TestInspectionOpensNoConnection(t *testing.T) {
	dir, _ := cleanEnv(t)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"refused by the test"}}`, http.StatusBadRequest)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	flags := []string{"--provider", "openai-compat", "--base-url", srv.URL + "/v1", "--model", "m"}

	code, out, stderr := rein(t, dir, "", append([]string{"context"}, append(flags, "-p", "hi")...)...)
	if code != 0 || out == "" {
		t.Fatalf("rein context: exit %d\n%s%s", code, out, stderr)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("rein context opened %d connection(s) to the provider", n)
	}

	// The control: a run reaches the same server.
	if code, _, _ := rein(t, dir, "", append(flags, "--no-session", "--max-retries", "0", "-p", "hi")...); code == 0 {
		t.Fatal("a run against a server that refuses every request succeeded")
	}
	if conns.Load() == 0 {
		t.Fatal("the run opened no connection: the check above proves nothing")
	}
}
