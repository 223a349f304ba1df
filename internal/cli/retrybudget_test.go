package cli_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/cli"
)

// hangingProvider is an OpenAI-compatible server that never answers a model call: it accepts
// the request and holds it until the client goes away. With overload set, every other request
// is answered at once with a retryable 529 (retry-after-ms: 1), so attempts are also retried
// within one process.
type hangingProvider struct {
	overload bool
	mu       sync.Mutex
	requests int
	hung     chan struct{} // one value per request held open
	stop     chan struct{} // closed at the end of the test: held requests return
}

func (p *hangingProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the whole request, so that the server notices when the client goes away.
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return
	}
	p.mu.Lock()
	p.requests++
	n := p.requests
	p.mu.Unlock()
	if p.overload && n%2 == 1 {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(529)
		fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_is_overloaded"}}`)
		return
	}
	p.hung <- struct{}{}
	select {
	case <-r.Context().Done():
	case <-p.stop:
	}
}

func (p *hangingProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// startRein starts rein (this test binary, installed on PATH by TestMain) in dir.
func startRein(t *testing.T, dir, home string, args ...string) (*exec.Cmd, *strings.Builder, chan error) {
	t.Helper()
	cmd := exec.Command("rein", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REIN_HOME="+home, "OPENAI_COMPAT_API_KEY=sk-test-retry", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, out, done
}

// TestCrashLoopKeepsTheRetryBudget SIGKILLs rein again and again while its model call is in
// flight — `rein -p`, then `rein -c` each time — and checks that the provider sees no more
// requests for the turn than the recorded policy allows (--max-retries 4: 5 attempts) in all
// the processes together, that once the call gave up `rein -c` sends nothing and exits 3
// naming it, and that the session verifies.
func TestCrashLoopKeepsTheRetryBudget(t *testing.T) {
	for _, overload := range []bool{false, true} {
		t.Run(map[bool]string{false: "hang", true: "overloaded-then-hang"}[overload], func(t *testing.T) {
			crashLoop(t, overload)
		})
	}
}

func crashLoop(t *testing.T, overload bool) {
	const maxAttempts = 5
	dir := t.TempDir()
	home := filepath.Join(dir, ".rein-home")
	p := &hangingProvider{overload: overload, hung: make(chan struct{}, 64), stop: make(chan struct{})}
	srv := httptest.NewServer(p)
	defer srv.Close()
	defer close(p.stop)
	first := []string{"--provider", "openai-compat", "--base-url", srv.URL, "--model", "m", "--max-retries", "4", "-p", "go"}
	gaveUpAt := -1 // the request count when a process first ended on its own
	kills := 0
	for i := range 8 {
		args := []string{"-c", "--max-retries", "4"}
		if i == 0 {
			args = first
		}
		before := p.count()
		cmd, out, done := startRein(t, dir, home, args...)
		select {
		case <-p.hung:
			// The request is in flight: its record is durable by now. Kill the process.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-done
			kills++
			t.Logf("process %d killed with its request in flight (%d requests in all)", i+1, p.count())
			if gaveUpAt >= 0 {
				t.Fatalf("process %d sent a request after the call gave up", i+1)
			}
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitModel {
				t.Fatalf("process %d: %v, want exit %d:\n%s", i+1, err, cli.ExitModel, out)
			}
			if !strings.Contains(out.String(), "gave up") && !strings.Contains(out.String(), "overloaded") {
				t.Errorf("process %d does not say why it stopped:\n%s", i+1, out)
			}
			t.Logf("process %d ended on its own after %d requests in all: %s", i+1, p.count(), strings.TrimSpace(out.String()))
			if gaveUpAt < 0 {
				gaveUpAt = p.count()
			} else if p.count() != before {
				t.Errorf("process %d sent %d requests for the given-up call", i+1, p.count()-before)
			}
			if i > 0 && gaveUpAt == before && !strings.Contains(out.String(), "gave up after 5 attempts") {
				t.Errorf("process %d does not report the given-up call:\n%s", i+1, out)
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatalf("process %d neither sent a request nor ended within a minute:\n%s", i+1, out)
		}
	}
	if n := p.count(); n != maxAttempts {
		t.Errorf("the provider saw %d requests for the turn in all; the recorded policy allows %d", n, maxAttempts)
	}
	if gaveUpAt < 0 || kills == 8 {
		t.Fatalf("no process gave up (%d kills)", kills)
	}
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("%d session ledgers, want 1", len(ledgers))
	}
	if out, code := runReinIn(t, dir, home, "session", "verify", filepath.Dir(ledgers[0])); code != 0 {
		t.Errorf("session verify: exit %d:\n%s", code, out)
	}
	// A new prompt is a new call: it is sent.
	before := p.count()
	cmd, out, done := startRein(t, dir, home, "-c", "--max-retries", "4", "-p", "try again")
	select {
	case <-p.hung:
		cmd.Process.Kill()
		<-done
	case err := <-done:
		t.Fatalf("a new prompt sent no request (%v):\n%s", err, out)
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("a new prompt neither sent a request nor ended within a minute:\n%s", out)
	}
	if p.count() == before {
		t.Error("the new prompt's call was not sent")
	}
}
