package cli_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/cli"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// cutChat is an OpenAI-compatible stream cut mid-answer: content, then the body ends with no
// finish_reason and no [DONE].
var cutChat = ct.Role + ct.Content("The answer ") + ct.Content("is forty")

// answers serves bodies in turn, the last one again for every later request.
func answers(t *testing.T, bodies ...string) *httptest.Server {
	t.Helper()
	return newChatServer(t, func(n int, _ []byte) string { return bodies[min(n, len(bodies)-1)] }).srv
}

// TestCutStreamPrintsOnlyTheCompleteAnswer: `rein -p` over a stream cut mid-answer retries
// it (after the policy's first backoff) and prints only the retry's complete answer.
func TestCutStreamPrintsOnlyTheCompleteAnswer(t *testing.T) {
	dir, _ := cleanEnv(t)
	srv := answers(t, cutChat, ct.SSE(ct.Role, ct.Content("The answer is 42."), ct.Finish("stop")))
	code, stdout, stderr := rein(t, dir, "", "--provider", "openai-compat", "--base-url", srv.URL, "--model", "qwen",
		"--no-tools", "--max-retries", "1", "-p", "What is the answer?")
	if code != 0 || stdout != "The answer is 42.\n" {
		t.Fatalf("exit %d\nstdout: %q\nstderr: %s", code, stdout, stderr)
	}
}

// TestCutStreamIsNoResult: when every attempt is cut, the run fails with the model's exit code
// and the result record carries no partial text as its answer.
func TestCutStreamIsNoResult(t *testing.T) {
	dir, _ := cleanEnv(t)
	srv := answers(t, cutChat)
	code, stdout, stderr := rein(t, dir, "", "--provider", "openai-compat", "--base-url", srv.URL, "--model", "qwen",
		"--no-tools", "--max-retries", "0", "--mode", "json", "What is the answer?")
	if code != cli.ExitModel {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, cli.ExitModel, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var result struct {
		Type, Text, Error string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &result); err != nil || result.Type != "result" {
		t.Fatalf("last line %q is not a result record (%v)", lines[len(lines)-1], err)
	}
	if result.Text != "" || !strings.Contains(result.Error, "incomplete_stream") {
		t.Errorf("result text %q error %q, want no text and an incomplete_stream error", result.Text, result.Error)
	}
}

func TestStreamIdleTimeoutMustBePositive(t *testing.T) {
	dir, _ := cleanEnv(t)
	code, _, stderr := rein(t, dir, "", "--script", "none.yaml", "--stream-idle-timeout", "0", "-p", "hi")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--stream-idle-timeout") {
		t.Errorf("exit %d stderr %q, want a usage error naming the flag", code, stderr)
	}
}
