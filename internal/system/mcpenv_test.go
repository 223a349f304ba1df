package system

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	reinmcp "github.com/reinhq/rein/internal/mcp"
)

// TestMCPSettingsEnvAndExpansion: the settings' env reaches a stdio server's environment
// (even a name the secret patterns would strip: it is set on purpose) and ${VAR} /
// ${VAR:-default} in its entry expand from it before the process environment; a server
// naming an unset variable without a default is not started, failed with an error naming
// the server and the variable, while the others run.
func TestMCPSettingsEnvAndExpansion(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	good := mcpEntry(t)
	good["args"] = []string{"-test.run=^$", "--label=${LABEL}", "--mode=${MODE:-fast}", "--literal=$LABEL"}
	good["env"] = map[string]string{envMCPServer: "1", envMCPEnvTool: "1", "FROM_ENTRY": "${REGION:-eu}-${LABEL}"}
	bad := mcpEntry(t)
	bad["args"] = []string{"-test.run=^$", "--token=${MISSING_TOKEN}"}
	writeJSON(t, filepath.Join(home, SettingsFile), map[string]any{
		"mcpServers": map[string]any{"good": good, "bad": bad},
		"env":        map[string]string{"LABEL": "from-settings", "API_TOKEN": "tok-123"},
	})
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`version: 1
turns:
  - calls:
      - {name: mcp__good__getenv, args: {name: FROM_ENTRY}}
      - {name: mcp__good__getenv, args: {name: API_TOKEN}}
  - text: done
`), 0o644)
	var notices []string
	rt, err := Open(context.Background(), Options{Script: scenario, Dir: dir, Home: home, Getenv: env(map[string]string{"LABEL": "from-process"}), MCP: true,
		Session: SessionChoice{Mode: SessionNone}, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(context.Background(), llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range out.Messages {
		if m.Role == llm.RoleTool {
			results = append(results, m.Text())
		}
	}
	want := []string{
		"FROM_ENTRY=eu-from-settings args=-test.run=^$ --label=from-settings --mode=fast --literal=$LABEL",
		"API_TOKEN=tok-123 args=-test.run=^$ --label=from-settings --mode=fast --literal=$LABEL",
	}
	if strings.Join(results, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(results, "\n"), strings.Join(want, "\n"))
	}
	var badInfo *reinmcp.ServerInfo
	for _, s := range rt.MCP.Servers() {
		if s.Name == "bad" {
			badInfo = &s
		}
	}
	if badInfo == nil || badInfo.State != reinmcp.StateFailed || !errors.Is(badInfo.Err, reinmcp.ErrUnsetVariable) ||
		!strings.Contains(badInfo.Err.Error(), "MCP server bad") || !strings.Contains(badInfo.Err.Error(), "${MISSING_TOKEN} is not set") {
		t.Errorf("bad server: %+v", badInfo)
	}
	if !strings.Contains(strings.Join(notices, "\n"), "server bad is not available") {
		t.Errorf("notices: %q", notices)
	}
}
