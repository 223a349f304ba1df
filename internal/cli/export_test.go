package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/cli"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

// fakeSecrets returns secrets the scanner must find, built at run time so this file does not
// itself look like it holds any.
func fakeSecrets() map[string]string {
	const alnum = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY"
	material := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 3)
	return map[string]string{
		"github-token":      "gh" + "p_" + alnum + "Zq9R",
		"aws-access-key-id": "AK" + "IA" + "Q3EGRTZ7LWX5MN2P",
		"private-key":       "-----BEGIN " + "PRIVATE KEY-----\n" + material + "\n" + material + "\n-----END " + "PRIVATE KEY-----",
		"generic-secret":    "Xk9#mQ2vL7pR4zW8nB3t",
	}
}

func runRein(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// TestExportRedactsSecrets: markdown and JSON exports (and show) carry no secret, name what
// they redacted on stderr, and leave the ledger as it was.
func TestExportRedactsSecrets(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("REIN_HOME", home)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	sec := fakeSecrets()
	command := "printf '%s\\n' 'db_password = " + sec["generic-secret"] + "'"
	scenario := map[string]any{
		"version": 1,
		"turns": []any{
			map[string]any{"text": "Checking.", "calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": command}}}},
			map[string]any{"text": "The token is " + sec["github-token"] + ", the key id " + sec["aws-access-key-id"] + ", and the key:\n" + sec["private-key"] + "\n"},
		},
	}
	b, err := json.Marshal(scenario) // JSON is YAML
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runRein(t, "--script", "s.yaml", "-p", "show me"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	ledger, before := onlyLedger(t, home)
	if !strings.Contains(string(before), sec["github-token"]) {
		t.Fatal("the ledger does not hold the text as it happened")
	}
	id := filepath.Base(filepath.Dir(ledger))

	for _, args := range [][]string{
		{"session", "export", id},
		{"session", "export", id, "--format", "json"},
		{"session", "show", id},
	} {
		t.Run(strings.Join(args[:2], " ")+" "+strings.Join(args[3:], " "), func(t *testing.T) {
			stdout, stderr, code := runRein(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for rule, s := range sec {
				if strings.Contains(stdout, s) || strings.Contains(stdout, strings.ReplaceAll(s, "\n", `\n`)) {
					t.Errorf("%s left in the output", rule)
				}
				if !strings.Contains(stdout, "[REDACTED:"+rule+"]") {
					t.Errorf("no [REDACTED:%s] in the output", rule)
				}
				if !strings.Contains(stderr, rule+" ×") {
					t.Errorf("stderr does not name %s: %s", rule, stderr)
				}
			}
			if !strings.Contains(stderr, "the session ledger is unchanged") || !strings.Contains(stderr, "rein: session ") {
				t.Errorf("stderr: %s", stderr)
			}
			if args[len(args)-1] == "json" && !json.Valid([]byte(stdout)) {
				t.Errorf("the redacted export is not valid JSON:\n%s", stdout)
			}
			if !strings.Contains(stdout, "Checking.") {
				t.Errorf("ordinary text lost:\n%s", stdout)
			}
		})
	}
	after, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("exporting changed the ledger")
	}
}

// TestSandboxFlag runs a real agent turn with --sandbox: its bash call cannot write outside
// the directory, reach $REIN_HOME (here inside the directory) or the network.
func TestSandboxFlag(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.New(t, sandbox.Config{Workspace: dir}) // skips or fails without bwrap
	t.Chdir(dir)
	home := filepath.Join(dir, ".rein-home")
	t.Setenv("REIN_HOME", home)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	probe := `{ echo inside > made.txt && echo wrote; touch /usr/rein-evil 2>/dev/null && echo system-writable; ` +
		`cat "$REIN_HOME/auth.json" 2>/dev/null && echo home-readable; (exec 3<>/dev/tcp/127.0.0.1/9) 2>/dev/null && echo network; } > report.txt`
	scenario := `{"version": 1, "turns": [{"calls": [{"name": "bash", "args": {"command": ` + strings.TrimSpace(mustJSON(t, probe)) + `}}]}, {"text": "done"}]}`
	if err := os.WriteFile("s.yaml", []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runRein(t, "--sandbox", "--script", "s.yaml", "-p", "probe"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	report, err := os.ReadFile("report.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(report) != "wrote\n" {
		t.Errorf("report from inside the sandbox = %q, want only %q", report, "wrote\n")
	}
	// Without --sandbox the same command does reach $REIN_HOME (so the test means something).
	if _, stderr, code := runRein(t, "--script", "s.yaml", "-p", "probe"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if report, _ := os.ReadFile("report.txt"); !strings.Contains(string(report), "home-readable") {
		t.Errorf("unsandboxed report = %q", report)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyLedger returns the path and bytes of the one session ledger under home.
func onlyLedger(t *testing.T, home string) (string, []byte) {
	t.Helper()
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("ledgers: %v", ledgers)
	}
	data, err := os.ReadFile(ledgers[0])
	if err != nil {
		t.Fatal(err)
	}
	return ledgers[0], data
}
