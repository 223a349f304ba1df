package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPListAndCall: `rein mcp list` shows each configured server's state and tools, and
// `rein mcp call` calls one. The filesystem server from npm joins when REIN_MCP_NPM_DIR names
// its installation (.ci/run sets it); internal/mcp tests it in depth.
func TestMCPListAndCall(t *testing.T) {
	dir, home := cleanEnv(t)
	servers := map[string]any{
		"broken": map[string]any{"command": filepath.Join(dir, "no-such-server")},
		"off":    map[string]any{"command": "true", "disabled": true},
	}
	npm := os.Getenv("REIN_MCP_NPM_DIR")
	if npm != "" {
		servers["fs"] = map[string]any{"command": filepath.Join(npm, "node_modules", ".bin", "mcp-server-filesystem"), "args": []string{"${PROJECT_ROOT}"}}
	}
	real, _ := filepath.EvalSymlinks(dir)
	t.Setenv("PROJECT_ROOT", real)
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := rein(t, dir, "", "mcp", "list")
	if code != 0 {
		t.Fatalf("rein mcp list: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"broken  failed  stdio", "no-such-server", "off  disabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("rein mcp list lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := rein(t, dir, "", "mcp", "call", "broken", "x", "{}"); code != 2 || !strings.Contains(errOut, "MCP server unavailable") {
		t.Errorf("calling a server that did not start: exit %d %s", code, errOut)
	}
	if code, _, _ := rein(t, dir, "", "mcp", "call", "broken", "x", "[1]"); code != 2 {
		t.Errorf("arguments that are not an object: exit %d, want 2", code)
	}
	if npm == "" {
		return
	}
	if !strings.Contains(out, "fs  connected  stdio") || !strings.Contains(out, "mcp__fs__read_text_file (read-only)") {
		t.Errorf("rein mcp list:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("apricot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = rein(t, dir, "", "mcp", "call", "fs", "read_text_file", `{"path":"`+filepath.Join(real, "a.txt")+`"}`)
	if code != 0 || !strings.Contains(out, "apricot") {
		t.Errorf("rein mcp call: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := rein(t, dir, "", "mcp", "call", "fs", "read_text_file", `{"path":"/etc/hostname"}`); code != 6 {
		t.Errorf("a tool error: exit %d, want 6", code)
	}
}
