package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uEscaped writes every byte of s as a JSON \u escape.
func uEscaped(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

// TestEscapedSecretsInToolArgumentsAreRedacted: secrets inside a tool call's JSON arguments —
// after a "\n" escape (no word boundary in the raw text), with their first byte written as a
// \u escape, written wholly in \u escapes — never appear in `rein session show` or either
// export, while the same values read back from the file are redacted as before, and the JSON
// export (with the arguments inside it) stays valid JSON.
func TestEscapedSecretsInToolArgumentsAreRedacted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("REIN_HOME", home)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	sec := fakeSecrets()
	aws, tok := sec["aws-access-key-id"], sec["github-token"]
	slack := "xo" + "xb-" + "123456789012-" + "Hq7Lm2Zt9Rw4Kc8Vn3Bx5Pd1"
	// Raw argument text, as a model sends it: the escapes are in the JSON.
	rawArgs := `{"path": "notes.txt", "content": "line\n` + aws + `\nkey \u0067` + tok[1:] + `\nhook ` + uEscaped(slack) + `\n"}`
	scenario := map[string]any{
		"version": 1,
		"turns": []any{
			map[string]any{"text": "Writing.", "calls": []any{
				map[string]any{"name": "write", "id": "call_raw", "raw": rawArgs},
				// args are sent as JSON: the newline before the key becomes "\n".
				map[string]any{"name": "write", "id": "call_args", "args": map[string]any{"path": "more.txt", "content": "x\n" + aws + "\n"}},
			}},
			map[string]any{"calls": []any{map[string]any{"name": "read", "id": "call_read", "args": map[string]any{"path": "notes.txt"}}}},
			map[string]any{"text": "Done."},
		},
	}
	b, err := json.Marshal(scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runRein(t, "--script", "s.yaml", "-p", "write them"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	// The tool really got the decoded values.
	if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || !strings.Contains(string(data), tok) || !strings.Contains(string(data), slack) {
		t.Fatalf("notes.txt = %q, %v", data, err)
	}
	ledger, before := onlyLedger(t, home)
	id := filepath.Base(filepath.Dir(ledger))

	// Every form the secrets could leave in, decoded or not.
	leaks := []string{aws, tok, tok[1:], tok[4:24], uEscaped(slack)[:60], slack, slack[13:], `\u0067` + tok[1:10]}
	for _, args := range [][]string{
		{"session", "show", id},
		{"session", "export", id},
		{"session", "export", id, "--format", "json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := runRein(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, s := range leaks {
				if strings.Contains(stdout, s) {
					t.Errorf("%q left in the output:\n%s", s, stdout)
				}
			}
			for _, rule := range []string{"aws-access-key-id", "github-token", "slack-token"} {
				if !strings.Contains(stdout, "[REDACTED:"+rule+"]") || !strings.Contains(stderr, rule+" ×") {
					t.Errorf("%s: no marker in the output or no count on stderr: %s", rule, stderr)
				}
			}
			if args[len(args)-1] == "json" {
				checkExport(t, stdout)
			} else if !strings.Contains(stdout, "result of read:") || strings.Count(stdout, "[REDACTED:github-token]") < 2 {
				t.Errorf("the file read back is not redacted as before:\n%s", stdout)
			}
		})
	}
	after, err := os.ReadFile(ledger)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("exporting changed the ledger (%v)", err)
	}
}

// checkExport decodes a JSON export strictly: one document, and every tool call's
// arguments valid JSON that still holds its path and the markers; the tool results of the
// file read back are redacted too.
func checkExport(t *testing.T, out string) {
	t.Helper()
	var doc struct {
		Messages []struct {
			Message struct {
				Role     string `json:"role"`
				ToolName string `json:"toolName"`
				Content  []struct {
					Type string `json:"type"`
					Text string `json:"text"`
					Call *struct {
						ID        string `json:"id"`
						Arguments string `json:"arguments"`
					} `json:"call"`
				} `json:"content"`
			} `json:"message"`
		} `json:"messages"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the redacted export is not valid JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("data after the export document")
	}
	calls, readBack := 0, false
	for _, m := range doc.Messages {
		for _, p := range m.Message.Content {
			if p.Call != nil {
				calls++
				var args struct{ Path, Content string }
				if err := json.Unmarshal([]byte(p.Call.Arguments), &args); err != nil || args.Path == "" {
					t.Errorf("call %s: the arguments are not JSON any more: %q %v", p.Call.ID, p.Call.Arguments, err)
				}
				if p.Call.ID == "call_raw" && (strings.Count(args.Content, "[REDACTED:") != 3 || !strings.HasPrefix(args.Content, "line\n[REDACTED:aws-access-key-id]\nkey [REDACTED:github-token]")) {
					t.Errorf("call_raw content = %q", args.Content)
				}
			}
			if m.Message.ToolName == "read" && strings.Contains(p.Text, "[REDACTED:github-token]") && strings.Contains(p.Text, "[REDACTED:slack-token]") {
				readBack = true
			}
		}
	}
	if calls != 3 || !readBack {
		t.Errorf("%d calls, file read back redacted: %v\n%s", calls, readBack, out)
	}
}
