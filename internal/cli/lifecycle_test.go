package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/cli"
)

// rein runs the CLI in-process in dir and returns its exit code, stdout and stderr.
func rein(t *testing.T, dir, stdin string, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// cleanEnv gives the test its own $REIN_HOME, an empty home directory and no provider keys in
// the environment.
func cleanEnv(t *testing.T) (dir, home string) {
	t.Helper()
	dir = t.TempDir()
	home = filepath.Join(dir, "home")
	t.Setenv("REIN_HOME", home)
	// The user's own ~/.claude and ~/.agents must not leak into the tests.
	t.Setenv("HOME", filepath.Join(dir, "user"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude-config")) // no real ~/.claude/settings.json
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	return dir, home
}

// TestStoredKeyChoosesTheProvider: `rein auth set anthropic` then `rein -p hi` runs on
// Anthropic with the stored key, with no provider flag and no key in the environment.
func TestStoredKeyChoosesTheProvider(t *testing.T) {
	dir, _ := cleanEnv(t)
	const key = "sk-ant-stored-7e1d"
	var mu sync.Mutex
	var gotKeys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		gotKeys = append(gotKeys, r.Header.Get("x-api-key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello from anthropic"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct{ Type string }
			fmt.Sscanf(ev, `{"type":%q`, &typ.Type)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
	}))
	defer srv.Close()
	if code, _, stderr := rein(t, dir, key+"\n", "auth", "set", "anthropic"); code != 0 {
		t.Fatalf("auth set: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := rein(t, dir, "", "--base-url", srv.URL, "--max-retries", "0", "-p", "hi")
	if code != 0 || !strings.Contains(stdout, "hello from anthropic") {
		t.Fatalf("rein -p hi: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if len(gotKeys) != 1 || gotKeys[0] != key {
		t.Fatalf("the server saw keys %q; want the stored key once", gotKeys)
	}
}

// TestFork: a fork inherits the parent's provider and model (as -c does), and a fork that
// fails leaves no session behind.
func TestFork(t *testing.T) {
	dir, home := cleanEnv(t)
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: one\n  - text: two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := rein(t, dir, "", "--script", scenario, "-p", "first"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	sessions := func() []string {
		m, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
		return m
	}
	if n := len(sessions()); n != 1 {
		t.Fatalf("%d sessions after the first run", n)
	}
	parent := filepath.Base(filepath.Dir(sessions()[0]))
	// No --script: the fork runs on the parent's script provider and scenario (without them
	// it would have no provider at all).
	code, stdout, stderr := rein(t, dir, "", "--fork", parent, "-p", "again")
	if code != 0 || !strings.Contains(stdout, "one") {
		t.Fatalf("fork: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if n := len(sessions()); n != 2 {
		t.Fatalf("%d sessions after the fork; want 2", n)
	}
	// A fork whose configuration fails (an unknown provider) leaves nothing behind.
	code, _, stderr = rein(t, dir, "", "--fork", parent, "--provider", "nope", "-p", "x")
	if code != cli.ExitUsage || !strings.Contains(stderr, "unknown provider") {
		t.Fatalf("failed fork: exit %d: %s", code, stderr)
	}
	// So does a fork refused by the trust gate (a project file needing a decision).
	if err := os.MkdirAll(filepath.Join(dir, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".rein", "SYSTEM.md"), []byte("be brief\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = rein(t, dir, "", "--fork", parent, "-p", "x")
	if code != cli.ExitBlocked {
		t.Fatalf("fork refused by the trust gate: exit %d: %s", code, stderr)
	}
	if n := len(sessions()); n != 2 {
		t.Fatalf("%d sessions after two failed forks; want 2", n)
	}
}

// TestSpillFilesStayWithTheSession: a bash output too large for the result is spilled into the
// session's directory, and a run without a session leaves no spill file anywhere.
func TestSpillFilesStayWithTheSession(t *testing.T) {
	dir, home := cleanEnv(t)
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	scenario := filepath.Join(dir, "s.yaml")
	body := "version: 1\nturns:\n  - calls: [{name: bash, args: {command: 'seq 1 200000'}}]\n  - text: done\n"
	if err := os.WriteFile(scenario, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := rein(t, dir, "", "--script", scenario, "-p", "count"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	spilled, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "rein-bash-*.log"))
	if len(spilled) != 1 {
		t.Fatalf("spill files in the session: %v", spilled)
	}
	if code, _, stderr := rein(t, dir, "", "--script", scenario, "--no-session", "-p", "count"); code != 0 {
		t.Fatalf("run without a session: exit %d: %s", code, stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the temp directory holds %d entries after the runs (%v)", len(left), left[0].Name())
	}
}
