package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/cli"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// stallOnceProvider is an OpenAI-compatible server whose first request hangs until its client
// goes away; every later one is answered: a valid Research contract, then a short text.
type stallOnceProvider struct {
	mu       sync.Mutex
	requests int
	hung     chan struct{}
}

func (p *stallOnceProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.requests++
	n := p.requests
	p.mu.Unlock()
	if n == 1 {
		p.hung <- struct{}{}
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.Contains(string(body), `"role":"tool"`) {
		io.WriteString(w, chattest.SSE(chattest.Role, chattest.Content("Submitted."), chattest.Finish("stop"), chattest.Usage(120, 3, 0)))
		return
	}
	args := `{"stage":"research","establishedEvidence":[{"id":"e1","statement":"The requirement asks for a thing.","references":["requirement"]}],"remainingUnknowns":[],"requiredEvidenceUnavailable":[],"clarificationQuestions":[]}`
	io.WriteString(w, chattest.SSE(chattest.Role, chattest.CallStart(0, "call_1", "rein_stage_result"), chattest.CallArgs(0, args),
		chattest.Finish("tool_calls"), chattest.Usage(100, 20, 0)))
}

// deliveryProject makes a git project with an approved profile whose workflow role runs on
// the OpenAI-compatible server at url, and starts a run; it returns the project and run id.
func deliveryProject(t *testing.T, dir, url string) (string, string) {
	t.Helper()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, "AGENTS.md"), "# Rules\n")
	writeFile(t, filepath.Join(dir, "req.md"), "# Add a thing\n")
	sum, err := exec.Command("sha256sum", filepath.Join(proj, "AGENTS.md")).Output()
	if err != nil {
		t.Skip("no sha256sum")
	}
	writeFile(t, filepath.Join(proj, ".rein", "profile.yaml"), fmt.Sprintf(`version: 1
guidance:
  - path: AGENTS.md
    digest: sha256:%s
verification: {test: {argv: [true], required: true}}
skills: []
models:
  workflow: {provider: openai-compat, model: m, baseUrl: %q, budget: {modelTurns: 12, tokens: 120000, elapsed: 1h}}
  writer: {provider: anthropic, model: a, budget: {modelTurns: 20, tokens: 120000, elapsed: 1h}}
  review: {provider: anthropic, model: b, budget: {modelTurns: 10, tokens: 60000, elapsed: 30m}}
`, sum[:64], url))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", proj}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if code, _, stderr := rein(t, proj, "", "profile", "approve", "--approver", "ana"); code != 0 {
		t.Fatalf("profile approve: %d %s", code, stderr)
	}
	code, stdout, stderr := rein(t, proj, "", "run", "start", "--requirement", filepath.Join(dir, "req.md"))
	if code != 0 {
		t.Fatalf("run start: %d %s", code, stderr)
	}
	m := regexp.MustCompile(`run: (\S+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no run id in %q", stdout)
	}
	return proj, m[1]
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKilledNextIsInterrupted runs `rein run next` as its own process with its model call in
// flight: status says running (its lease: pid, host) and a second next refuses (exit 7). The
// process is SIGKILLed: status says interrupted with the resume command; resume takes the
// stale lease over (recorded), settles the attempt as interrupted and runs the next one; the
// metrics count both recoveries.
func TestKilledNextIsInterrupted(t *testing.T) {
	dir, home := cleanEnv(t)
	t.Setenv("OPENAI_COMPAT_API_KEY", "sk-test-states")
	p := &stallOnceProvider{hung: make(chan struct{}, 1)}
	srv := httptest.NewServer(p)
	defer srv.Close()
	proj, id := deliveryProject(t, dir, srv.URL+"/v1")

	cmd, out, done := startRein(t, proj, home, "run", "next", id)
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case <-p.hung:
	case err := <-done:
		t.Fatalf("rein run next ended before its model call: %v\n%s", err, out)
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("rein run next sent no request within a minute:\n%s", out)
	}
	code, stdout, _ := rein(t, proj, "", "run", "status", id)
	if code != 0 || !strings.Contains(stdout, "state: running\n") || !strings.Contains(stdout, fmt.Sprintf("lease: pid %d on ", cmd.Process.Pid)) {
		t.Errorf("status while next runs: exit %d\n%s", code, stdout)
	}
	_, stdout, _ = rein(t, proj, "", "run", "status", id, "--json")
	checkEmitted(t, statusSchemaHeading, []byte(stdout))
	if !strings.Contains(stdout, `"state": "running"`) || !strings.Contains(stdout, `"live": true`) {
		t.Errorf("status --json while next runs:\n%s", stdout)
	}
	code, _, stderr := rein(t, proj, "", "run", "next", id)
	if code != cli.ExitSession || !strings.Contains(stderr, fmt.Sprintf("is being run by `rein run next` (pid %d", cmd.Process.Pid)) {
		t.Errorf("a second next: exit %d, want %d naming the holder:\n%s", code, cli.ExitSession, stderr)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := <-done; !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("the killed next: %v", err)
	}
	code, stdout, _ = rein(t, proj, "", "run", "status", id)
	if code != 0 || !strings.Contains(stdout, "state: interrupted\n") || !strings.Contains(stdout, "interrupted: resume with rein run resume "+id+"\n") ||
		!strings.Contains(stdout, "process gone") {
		t.Fatalf("status after SIGKILL: exit %d\n%s", code, stdout)
	}
	_, stdout, _ = rein(t, proj, "", "run", "status", id, "--json")
	checkEmitted(t, statusSchemaHeading, []byte(stdout))
	if !strings.Contains(stdout, `"state": "interrupted"`) || !strings.Contains(stdout, `"command": "rein run resume `+id+`"`) {
		t.Errorf("status --json after SIGKILL:\n%s", stdout)
	}
	code, _, stderr = rein(t, proj, "", "run", "resume", id)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	code, stdout, _ = rein(t, proj, "", "run", "status", id)
	if code != 0 || !strings.Contains(stdout, "state: ready\n") || !strings.Contains(stdout, "  attempt 1: failed interrupted") ||
		!strings.Contains(stdout, "  attempt 2: accepted") || strings.Contains(stdout, "lease: ") {
		t.Fatalf("status after resume: exit %d\n%s", code, stdout)
	}
	_, stdout, _ = rein(t, proj, "", "run", "status", id, "--json")
	checkEmitted(t, statusSchemaHeading, []byte(stdout))
	code, stdout, stderr = rein(t, proj, "", "run", "metrics", id, "--json")
	checkEmitted(t, metricsSchemaHeading, []byte(stdout))
	var m struct {
		Recoveries map[string]int `json:"recoveries"`
		Stages     []struct {
			Stage    string         `json:"stage"`
			Attempts int            `json:"attempts"`
			Outcomes map[string]int `json:"outcomes"`
		} `json:"stages"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &m) != nil {
		t.Fatalf("metrics: exit %d %s\n%s", code, stderr, stdout)
	}
	if m.Recoveries["lease_taken_over"] != 1 || m.Recoveries["interrupted_failed"] != 1 || m.Stages[0].Attempts != 2 ||
		m.Stages[0].Outcomes["interrupted"] != 1 || m.Stages[0].Outcomes["accepted"] != 1 {
		t.Fatalf("metrics = %+v", m)
	}
}
