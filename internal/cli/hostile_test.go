package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// chatServer is an OpenAI-compatible server answering the n-th request (0-based) with
// answer(n, body); it keeps every request body.
type chatServer struct {
	mu     sync.Mutex
	bodies [][]byte
	srv    *httptest.Server
}

func newChatServer(t *testing.T, answer func(n int, body []byte) string) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer(n, body))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *chatServer) body(n int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.bodies) {
		return nil
	}
	return s.bodies[n]
}

func (s *chatServer) args(extra ...string) []string {
	return append([]string{"--provider", "openai-compat", "--base-url", s.srv.URL, "--model", "m", "--api-key", "k", "--max-retries", "0"}, extra...)
}

func calls(cs ...[3]string) string {
	events := []string{chattest.Role}
	for i, c := range cs {
		events = append(events, chattest.CallStart(i, c[0], c[1]), chattest.CallArgs(i, c[2]))
	}
	return chattest.SSE(append(events, chattest.Finish("tool_calls"), chattest.Usage(10, 5, 0))...)
}

func text(s string) string {
	return chattest.SSE(chattest.Role, chattest.Content(s), chattest.Finish("stop"), chattest.Usage(10, 5, 0))
}

// checkRequestPairs fails unless the request's tool calls have distinct ids and each tool
// message answers a call of the assistant message before it, every call exactly once.
func checkRequestPairs(t *testing.T, body []byte) (ids []string) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role      string `json:"role"`
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	seen := map[string]bool{}
	var open map[string]bool
	flush := func() {
		for id := range open {
			t.Errorf("call %s has no result in the request", id)
		}
		open = nil
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			if !open[m.ToolCallID] {
				t.Errorf("tool result %q answers no open call of the assistant message before it", m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case "assistant":
			flush()
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				if seen[c.ID] {
					t.Errorf("tool-call id %q is sent twice", c.ID)
				}
				seen[c.ID], open[c.ID] = true, true
				ids = append(ids, c.ID)
			}
		default:
			flush()
		}
	}
	flush()
	return ids
}

func onlySession(t *testing.T, home string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(m) != 1 {
		t.Fatalf("%d sessions, want 1", len(m))
	}
	return filepath.Dir(m[0])
}

// TestProviderCallIDsAreNotTrusted: a server that sends two calls with one id, then reuses it
// in a later turn, leaves a session that verifies, reopens, and sends each result with its call.
func TestProviderCallIDsAreNotTrusted(t *testing.T) {
	dir, home := cleanEnv(t)
	srv := newChatServer(t, func(n int, _ []byte) string {
		switch n {
		case 0:
			return calls([3]string{"call_1", "ls", `{}`}, [3]string{"call_1", "ls", `{"path":"."}`})
		case 1:
			return calls([3]string{"call_1", "ls", `{}`})
		case 2:
			return text("done")
		}
		return text("again")
	})
	code, stdout, stderr := rein(t, dir, "", srv.args("-p", "go")...)
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	sd := onlySession(t, home)
	id := filepath.Base(sd)
	if code, out, errOut := rein(t, dir, "", "session", "verify", id); code != 0 {
		t.Fatalf("session verify: exit %d: %s%s", code, out, errOut)
	}
	if got := checkRequestPairs(t, srv.body(2)); strings.Join(got, ",") != "call_1,rein_1_call_1,rein_2_call_1" {
		t.Errorf("the third request sends calls %v, want call_1,rein_1_call_1,rein_2_call_1", got)
	}
	ledger, err := os.ReadFile(filepath.Join(sd, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(ledger), `"providerId":"call_1"`); n < 2 {
		t.Errorf("the ledger records the provider's id of %d renamed calls, want the 2 renamed calls", n)
	}
	code, stdout, stderr = rein(t, dir, "", srv.args("-c", "-p", "more")...)
	if code != 0 || !strings.Contains(stdout, "again") {
		t.Fatalf("continue: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if got := checkRequestPairs(t, srv.body(3)); len(got) != 3 {
		t.Errorf("the continued request sends calls %v, want the 3 of the first run", got)
	}
}

// TestHugeToolArguments: 10 MB of arguments are stored as blobs and the call runs; 20 MB are
// answered with a tool error; the run completes, verifies and reopens — from a scripted server
// and from the script model.
func TestHugeToolArguments(t *testing.T) {
	big := strings.Repeat("a", 10<<20)
	huge := strings.Repeat("b", 20<<20)
	writeArgs := func(path, content string) string {
		b, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return string(b)
	}
	check := func(t *testing.T, dir, home string, lastBody func() []byte, args ...string) {
		t.Helper()
		code, stdout, stderr := rein(t, dir, "", append(args, "-p", "go")...)
		if code != 0 || !strings.Contains(stdout, "done") {
			t.Fatalf("run: exit %d\nstdout: %.2000s\nstderr: %.2000s", code, stdout, stderr)
		}
		if fi, err := os.Stat(filepath.Join(dir, "big.txt")); err != nil || fi.Size() != int64(len(big)) {
			t.Errorf("big.txt: %v (size %v), want the 10 MB written", err, fi)
		}
		if _, err := os.Stat(filepath.Join(dir, "huge.txt")); err == nil {
			t.Error("huge.txt was written; 20 MB of arguments must not run")
		}
		if b := lastBody(); b != nil && !strings.Contains(string(b), fmt.Sprintf("arguments too large: %d bytes, limit %d", len(writeArgs("huge.txt", huge)), 16<<20)) {
			t.Errorf("the last request does not carry the tool error for the 20 MB call")
		}
		sd := onlySession(t, home)
		if code, out, errOut := rein(t, dir, "", "session", "verify", filepath.Base(sd)); code != 0 {
			t.Fatalf("session verify: exit %d: %s%s", code, out, errOut)
		}
		blobs, _ := filepath.Glob(filepath.Join(sd, "blobs", "sha256", "*", "*"))
		if len(blobs) < 2 {
			t.Errorf("blobs %v, want the messages and the intent's call", blobs)
		}
		fi, err := os.Stat(filepath.Join(sd, "ledger.jsonl"))
		if err != nil || fi.Size() > 1<<20 {
			t.Errorf("ledger: %v, %v; the payloads belong in blobs", err, fi)
		}
		code, stdout, stderr = rein(t, dir, "", append(args, "-c", "-p", "more")...)
		if code != 0 || !strings.Contains(stdout, "again") {
			t.Fatalf("continue: exit %d\nstdout: %.2000s\nstderr: %.2000s", code, stdout, stderr)
		}
	}

	t.Run("server", func(t *testing.T) {
		dir, home := cleanEnv(t)
		srv := newChatServer(t, func(n int, body []byte) string {
			switch {
			case n == 0:
				return calls([3]string{"call_1", "write", writeArgs("big.txt", big)})
			case n == 1:
				return calls([3]string{"call_2", "write", writeArgs("huge.txt", huge)})
			case n == 2:
				return text("done")
			}
			return text("again")
		})
		check(t, dir, home, func() []byte { return srv.body(2) }, srv.args()...)
	})

	t.Run("script", func(t *testing.T) {
		dir, home := cleanEnv(t)
		scenario := map[string]any{"version": 1, "dialogs": []any{
			map[string]any{"match": "go", "turns": []any{
				map[string]any{"calls": []any{map[string]any{"name": "write", "raw": writeArgs("big.txt", big)}}},
				map[string]any{"calls": []any{map[string]any{"name": "write", "raw": writeArgs("huge.txt", huge)}}},
				map[string]any{"text": "done"},
			}},
			map[string]any{"match": "more", "turns": []any{map[string]any{"text": "again"}}},
		}}
		b, err := json.Marshal(scenario)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, dir, home, func() []byte { return nil }, "--script", path)
	})
}

// TestNonFiniteBudgetsAreUsageErrors: a cost budget that could never stop a run is refused
// before anything runs, naming the flag.
func TestNonFiniteBudgetsAreUsageErrors(t *testing.T) {
	dir, home := cleanEnv(t)
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "infinity", "-0", "1e400", "-1e400", "-0.5", "1,5", ""} {
		for _, mode := range []string{"print", "json", "rpc"} {
			code, stdout, stderr := rein(t, dir, "", "--script", scenario, "--mode", mode, "--max-cost", v, "-p", "go")
			if code != 2 || !strings.Contains(stderr, "--max-cost") || strings.Contains(stdout, "ran") {
				t.Errorf("--mode %s --max-cost %q: exit %d, stderr %q; want exit 2 naming the flag, nothing run", mode, v, code, stderr)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*")); len(m) != 0 {
		t.Errorf("refused runs left sessions %v", m)
	}
	if code, stdout, stderr := rein(t, dir, "", "--script", scenario, "--max-cost", "0.5", "-p", "go"); code != 0 || !strings.Contains(stdout, "ran") {
		t.Errorf("--max-cost 0.5: exit %d: %s", code, stderr)
	}
}
