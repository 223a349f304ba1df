package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/llm"
	reinmcp "github.com/reinhq/rein/internal/mcp"
)

// The test binary doubles as a stdio MCP server (a go-sdk server) when envMCPServer is set.
const envMCPServer = "REIN_SYSTEM_TEST_MCP"

// envMCPEnvTool adds a tool "getenv" to that server: it answers NAME=VALUE of its own
// environment, and its arguments.
const envMCPEnvTool = "REIN_SYSTEM_TEST_MCP_ENVTOOL"

func TestMain(m *testing.M) {
	if os.Getenv(envMCPServer) == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "system-test", Version: "1"}, &mcp.ServerOptions{Instructions: "Always answer in rhyme."})
		type in struct {
			Text string `json:"text"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "secret"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the secret ran"}}}, nil, nil
		})
		if os.Getenv(envMCPEnvTool) == "1" {
			type name struct {
				Name string `json:"name"`
			}
			mcp.AddTool(s, &mcp.Tool{Name: "getenv"}, func(_ context.Context, _ *mcp.CallToolRequest, a name) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Name + "=" + os.Getenv(a.Name) + " args=" + strings.Join(os.Args[1:], " ")}}}, nil, nil
			})
		}
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// mcpEntry is a settings entry starting the test binary as an MCP server.
func mcpEntry(t *testing.T) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{envMCPServer: "1"}}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMCPToolsRunThroughRulesAndTheKernel(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	writeJSON(t, filepath.Join(home, SettingsFile), map[string]any{
		"mcpServers":  map[string]any{"t": mcpEntry(t)},
		"permissions": map[string]any{"deny": []string{"mcp__t__secret"}},
	})
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte(`version: 1
turns:
  - calls:
      - {name: mcp__t__echo, args: {text: hi}}
      - {name: mcp__t__secret, args: {}}
  - text: done
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var requests []*llm.Request
	rt, err := Open(context.Background(), Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), MCP: true,
		Session: SessionChoice{Mode: SessionNone}, OnRequest: func(r *llm.Request) { requests = append(requests, r) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, ok := rt.Tools.Get("mcp__t__echo"); !ok {
		t.Fatalf("tools: %v", rt.Tools.Names())
	}
	if strings.Contains(rt.System.Prompt, "rhyme") {
		t.Error("a server's instructions reached the prompt without the setting")
	}
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
	if len(results) != 2 || results[0] != "echo: hi" || !strings.Contains(results[1], "denied") || strings.Contains(results[1], "secret ran") {
		t.Fatalf("tool results: %q", results)
	}
	if len(requests) == 0 || !hasTool(requests[0], "mcp__t__echo") || hasTool(requests[0], reinmcp.SearchToolName) {
		t.Errorf("two MCP tools are under the threshold: the request should carry them, not the search tool")
	}
}

func TestMCPLazyLoadingAndInstructions(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	writeJSON(t, filepath.Join(home, SettingsFile), map[string]any{
		"mcpServers": map[string]any{"t": mcpEntry(t)},
		"mcp":        map[string]any{"searchThreshold": 0, "instructions": true},
	})
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - calls:\n      - {name: mcp_search, args: {query: echo}}\n  - text: done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var requests []*llm.Request
	rt, err := Open(context.Background(), Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), MCP: true,
		Session: SessionChoice{Mode: SessionNone}, OnRequest: func(r *llm.Request) { requests = append(requests, r) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if !strings.Contains(rt.System.Prompt, "Always answer in rhyme.") || !strings.Contains(rt.System.Prompt, "not by the user") {
		t.Error("instructions enabled but not in the prompt, or not marked as the server's")
	}
	if _, err := rt.Run(context.Background(), llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if len(requests) != 2 {
		t.Fatalf("%d requests", len(requests))
	}
	if !hasTool(requests[0], reinmcp.SearchToolName) || hasTool(requests[0], "mcp__t__echo") {
		t.Errorf("first request tools: %v", toolNames(requests[0]))
	}
	if !hasTool(requests[1], "mcp__t__echo") || hasTool(requests[1], "mcp__t__secret") {
		t.Errorf("after searching for echo: %v", toolNames(requests[1]))
	}
}

func TestMCPJSONIsTrustGated(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	writeJSON(t, filepath.Join(dir, reinmcp.ProjectFile), map[string]any{"mcpServers": map[string]any{"proj": mcpEntry(t)}, "extra": 1})
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), MCP: true, Session: SessionChoice{Mode: SessionNone}}
	if _, err := Build(o); !errors.Is(err, ErrTrustRequired) || !strings.Contains(err.Error(), reinmcp.ProjectFile) {
		t.Fatalf("an undecided project with %s: %v, want ErrTrustRequired naming it", reinmcp.ProjectFile, err)
	}
	var notices []string
	o.Trust, o.Notice = TrustOnce, func(s string) { notices = append(notices, s) }
	rt, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, ok := rt.Tools.Get("mcp__proj__echo"); !ok {
		t.Errorf("trusted: tools %v", rt.Tools.Names())
	}
	if !strings.Contains(strings.Join(notices, "\n"), `"extra" is not used by rein`) {
		t.Errorf("notices: %q", notices)
	}
	o.Trust = TrustNotOnce
	rt2, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if _, ok := rt2.Tools.Get("mcp__proj__echo"); ok || rt2.MCP != nil {
		t.Error("--no-trust still started the project's server")
	}
}

func hasTool(r *llm.Request, name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func toolNames(r *llm.Request) string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return fmt.Sprint(out)
}
