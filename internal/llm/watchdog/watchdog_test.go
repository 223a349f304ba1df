package watchdog_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// get sends a GET to url through x, as an SDK middleware chain would.
func get(t *testing.T, x *watchdog.Exchange, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return x.Middleware(req, http.DefaultClient.Do)
}

// TestSteadyStreamOutlivesTheIdleLimit: the idle timer is re-armed by every read, so a stream
// that keeps sending runs longer than the limit in total.
func TestSteadyStreamOutlivesTheIdleLimit(t *testing.T) {
	const idle = time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tick := time.NewTicker(idle / 10)
		defer tick.Stop()
		for i := range 15 { // 1.5 × the idle limit in all
			fmt.Fprintf(w, "chunk %d\n", i)
			w.(http.Flusher).Flush()
			<-tick.C
		}
	}))
	defer srv.Close()
	x := watchdog.New(watchdog.Limits{Idle: idle})
	start := time.Now()
	res, err := get(t, x, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read after %v: %v", time.Since(start), err)
	}
	if len(body) == 0 || !x.Responded() || x.Err() != nil {
		t.Errorf("body %d bytes, responded %v, err %v", len(body), x.Responded(), x.Err())
	}
}

// TestIdleBody: a body that goes silent fails its blocked read with the watchdog's error,
// after some bytes arrived.
func TestIdleBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
			t.Error("the client never gave up")
		}
	}))
	defer srv.Close()
	x := watchdog.New(watchdog.Limits{Idle: 50 * time.Millisecond})
	res, err := get(t, x, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	var wd *watchdog.Error
	if string(body) != "first" || !errors.As(err, &wd) || wd.Phase != watchdog.PhaseBody {
		t.Fatalf("body %q err %v, want \"first\" then the idle timeout", body, err)
	}
	if e := wd.LLM(); e.Kind != llm.KindIncompleteStream || !e.Retryable {
		t.Errorf("LLM() = %+v, want a retryable incomplete stream", e)
	}
	if !errors.Is(x.Err(), wd) {
		t.Errorf("Err() = %v, want the timeout", x.Err())
	}
}

// TestNoHeaders: a server that never answers fails the round trip with the header timeout.
func TestNoHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
			t.Error("the client never gave up")
		}
	}))
	defer srv.Close()
	x := watchdog.New(watchdog.Limits{Header: 50 * time.Millisecond})
	_, err := get(t, x, srv.URL)
	var wd *watchdog.Error
	if !errors.As(err, &wd) || wd.Phase != watchdog.PhaseHeaders || x.Responded() {
		t.Fatalf("err %v responded %v, want the header timeout", err, x.Responded())
	}
	if e := wd.LLM(); e.Kind != llm.KindTimeout || !e.Retryable {
		t.Errorf("LLM() = %+v, want a retryable timeout", e)
	}
}

// TestCallerCancelIsNotATimeout: the caller's own cancellation surfaces as it is.
func TestCallerCancelIsNotATimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	x := watchdog.New(watchdog.Limits{})
	cancel()
	_, err := x.Middleware(req, http.DefaultClient.Do)
	var wd *watchdog.Error
	if err == nil || errors.As(err, &wd) {
		t.Fatalf("err = %v, want the cancellation, not a timeout", err)
	}
}
