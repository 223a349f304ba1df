package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
)

// canary is the text of every denied file; it must never reach the model.
const canary = "CANARY-7f3a9c"

// denyWorkspace lays out a workspace (with $REIN_HOME inside it) whose global settings deny
// reading **/.env and writing docs/private/**, with .env files in several directories,
// links to them, a hard link to a file outside the workspace, and a stored key holding the
// canary in $REIN_HOME/auth.json.
func denyWorkspace(t *testing.T) (dir, home string) {
	t.Helper()
	dir, home = cleanEnv(t)
	files := map[string]string{
		".env":               canary + "-root\n",
		"a/.env":             "before\n" + canary + "-a\nafter\n",
		"a/b/.env":           canary + "-b\n",
		"docs/private/x.md":  "private\n",
		"ok.txt":             "fine " + "public\n",
		"home/settings.json": `{"permissions": {"deny": ["read(**/.env)", "write(docs/private/**)"]}}`,
	}
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	if code, out, errOut := rein(t, dir, canary+"-key\n", "auth", "set", "openai"); code != 0 {
		t.Fatalf("auth set: %d %s%s", code, out, errOut)
	}
	for link, target := range map[string]string{"envlink": "a/.env", "pl": "docs/private"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "a/.env"), filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), ".env")
	write(t, outside, canary+"-outside\n")
	if err := os.Link(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	return dir, home
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCalls runs one turn of the given calls (name, arguments) through a recording server,
// then a final answer, and returns every request body.
func runCalls(t *testing.T, dir string, extra []string, cs [][2]string) []string {
	t.Helper()
	var batch [][3]string
	for i, c := range cs {
		batch = append(batch, [3]string{fmt.Sprintf("call_%d", i), c[0], c[1]})
	}
	srv := newChatServer(t, func(n int, _ []byte) string {
		if n == 0 {
			return calls(batch...)
		}
		return text("done")
	})
	code, stdout, stderr := rein(t, dir, "", srv.args(append(extra, "-p", "go")...)...)
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var bodies []string
	for n := 0; srv.body(n) != nil; n++ {
		bodies = append(bodies, string(srv.body(n)))
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	return bodies
}

// toolResults returns the text of each tool result in a request body, by call id.
func toolResults(t *testing.T, body string) map[string]string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = string(m.Content)
		}
	}
	return out
}

// TestDenyReadHoldsForEveryTool: with deny read(**/.env), no tool and no static bash form
// sends a denied file's text (or $REIN_HOME's credentials) to the model, and the refusals
// name the rule; with deny write(docs/private/**), write and edit through a symbolic link
// to the directory are refused.
func TestDenyReadHoldsForEveryTool(t *testing.T) {
	dir, _ := denyWorkspace(t)
	cs := [][2]string{
		{"grep", `{"pattern":"CANARY"}`},
		{"grep", `{"pattern":"CANARY","glob":".env"}`},
		{"grep", `{"pattern":"CANARY","glob":"**/.env","literal":true}`},
		{"grep", `{"pattern":"public","context":9}`},
		{"grep", `{"pattern":"CANARY","path":"a","context":2}`},
		{"grep", `{"pattern":"canary","ignoreCase":true,"path":"home"}`},
		{"read", `{"path":".env"}`},
		{"read", `{"path":"envlink"}`},
		{"read", `{"path":"hard.txt"}`},
		{"read", `{"path":"notes.txt"}`},
		{"read", `{"path":"home/auth.json"}`},
		{"find", `{"pattern":"**"}`},
		{"ls", `{}`},
		{"ls", `{"path":"a"}`},
		{"bash", `{"command":"cat .env"}`},
		{"bash", `{"command":"dd if=.env status=none"}`},
		{"bash", `{"command":"cat \"$PWD/a/.env\""}`},
		{"bash", `{"command":"f=a/b/.env; cat $f"}`},
		{"bash", `{"command":"cat home/auth.json"}`},
		{"write", `{"path":"pl/new.md","content":"x"}`},
		{"edit", `{"path":"pl/x.md","edits":[{"oldText":"private","newText":"public"}]}`},
	}
	bodies := runCalls(t, dir, nil, cs)
	for i, b := range bodies {
		if strings.Contains(b, canary) {
			t.Errorf("request %d carries the canary:\n%s", i, b)
		}
	}
	results := toolResults(t, bodies[1])
	want := map[int]string{
		6: `read(**/.env)`, 7: `read(**/.env)`, 8: "hard links", 9: "hard links", 10: "rein's home directory",
		14: `read(**/.env)`, 15: `read(**/.env)`, 16: `read(**/.env)`, 17: `read(**/.env)`, 18: "rein's home directory",
		19: `write(docs/private/**)`, 20: `write(docs/private/**)`,
	}
	for i, w := range want {
		if r := results[fmt.Sprintf("call_%d", i)]; !strings.Contains(r, w) {
			t.Errorf("%s %s: result %s, want it to name %s", cs[i][0], cs[i][1], r, w)
		}
	}
	if r := results["call_3"]; !strings.Contains(r, "ok.txt:1: fine public") {
		t.Errorf("grep left out the allowed file: %s", r)
	}
	if r := results["call_12"]; strings.Contains(r, ".env") || strings.Contains(r, "envlink") || !strings.Contains(r, "ok.txt") || strings.Contains(r, "home/") {
		t.Errorf("ls lists a denied entry (or leaves out ok.txt): %s", r)
	}
	if _, err := os.Lstat(filepath.Join(dir, "docs/private/new.md")); err == nil {
		t.Error("write through pl created docs/private/new.md")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "docs/private/x.md")); string(b) != "private\n" {
		t.Errorf("edit through pl changed docs/private/x.md: %q", b)
	}
}

// TestDenyReadInsideSandbox: inside --sandbox the read-denied files are masked, so commands
// that compute the path when they run, go through a link or a hard link, or search a
// directory read nothing of them; $REIN_HOME stays hidden.
func TestDenyReadInsideSandbox(t *testing.T) {
	dir, _ := denyWorkspace(t)
	sandboxtest.New(t, sandbox.Config{Workspace: dir}) // skips or fails without bwrap
	cs := [][2]string{
		{"bash", `{"command":"cat $(printf .e; printf nv)"}`},
		{"bash", `{"command":"cat $(printf a/.e; printf nv) envlink hard.txt notes.txt a/b/$(printf .en; printf v); echo ran"}`},
		{"bash", `{"command":"grep -r CANARY . ; echo searched"}`},
		{"bash", `{"command":"cat $(printf ho; printf me)/auth.json"}`},
		{"bash", `{"command":"cat ok.txt"}`},
	}
	bodies := runCalls(t, dir, []string{"--sandbox"}, cs)
	for i, b := range bodies {
		if strings.Contains(b, canary) {
			t.Errorf("request %d carries the canary:\n%s", i, b)
		}
	}
	results := toolResults(t, bodies[1])
	if r := results["call_4"]; !strings.Contains(r, "fine public") {
		t.Errorf("cat ok.txt in the sandbox: %s", r)
	}
	for id, marker := range map[string]string{"call_0": "exited", "call_1": "ran", "call_2": "searched", "call_3": "exited"} {
		if r := results[id]; !strings.Contains(r, marker) || strings.Contains(r, "policy.") {
			t.Errorf("%s did not run in the sandbox (the sandbox, not the rules, must stop it): %s", id, r)
		}
	}
}
