package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/internal/llm"
)

// inMemory connects a Manager to srv over pipes, rein's client and the go-sdk's server both
// speaking the stdio transport's framing.
func inMemory(t *testing.T, srv *mcp.Server, name string) *Manager {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := Open(ctx, Options{Servers: []Server{{Name: name, Command: "unused"}}, StartTimeout: 10 * time.Second,
		Transport: func(Server) (io.ReadCloser, io.WriteCloser) {
			toClient, fromServer := io.Pipe()
			toServer, fromClient := io.Pipe()
			go func() { _ = srv.Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) }()
			return toClient, fromClient
		}})
	t.Cleanup(func() { _ = m.Close() })
	if st := m.Servers()[0]; st.State != StateConnected {
		t.Fatalf("in-memory server: %s %v", st.State, st.Err)
	}
	return m
}

func TestToolsListChangedIsFollowed(t *testing.T) {
	srv := testServer()
	m := inMemory(t, srv, "mem")
	before := len(m.Servers()[0].Tools)
	mcp.AddTool(srv, &mcp.Tool{Name: "late", Description: "Added after the start."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		})
	srv.RemoveTools("crash")
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := map[string]bool{}
		for _, ti := range m.Servers()[0].Tools {
			names[ti.MCPName] = true
		}
		if names["late"] && !names["crash"] {
			if len(names) != before {
				t.Errorf("tools: %d before, %d after one added and one removed", before, len(names))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool list did not follow tools/list_changed: %v", names)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, err := m.Call(context.Background(), "mem", "late", nil)
	if err != nil || text2(out) != "late" {
		t.Fatalf("calling the new tool: %q %v", text2(out), err)
	}
	// A removed tool answers with the server's error, not a hang.
	if out, err := m.Call(context.Background(), "mem", "crash", nil); err == nil && !out.IsError {
		t.Fatalf("a removed tool answered %q", text2(out))
	}
}

func TestCollidingNamesAreRefused(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	for _, n := range []string{"a.b", "a b", "ok"} {
		mcp.AddTool(srv, &mcp.Tool{Name: n}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	m := inMemory(t, srv, "dup")
	tools, problems := m.Tools()
	if len(tools) != 1 || tools[0].Spec().Name != "mcp__dup__ok" {
		t.Errorf("offered: %v", tools)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "mcp__dup__a_b") || !strings.Contains(problems[0], `"a.b"`) || !strings.Contains(problems[0], `"a b"`) {
		t.Errorf("problems: %v", problems)
	}
}

func TestSearchLoadsSchemasOnDemand(t *testing.T) {
	m := inMemory(t, testServer(), "mem")
	tools, _ := m.Tools()
	if !Lazy(tools, 3) || Lazy(tools, 40) {
		t.Fatalf("Lazy with %d tools", len(tools))
	}
	cat := NewCatalog(tools)
	req := &llm.Request{Tools: []llm.ToolSpec{{Name: "read"}}}
	for _, tl := range tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: tl.Spec().Name, Schema: tl.Spec().Schema})
	}
	if got := cat.Filter(req).Tools; len(got) != 1 || got[0].Name != "read" {
		t.Fatalf("before a search the request carries %v", got)
	}
	res, err := cat.SearchTool().Run(context.Background(), callArgs(`{"query":"echo text"}`))
	if err != nil || !strings.Contains(text(res), "mcp__mem__echo") || !strings.Contains(text(res), `"text"`) {
		t.Fatalf("search: %q %v", text(res), err)
	}
	got := cat.Filter(req).Tools
	if len(got) != 2 || got[1].Name != "mcp__mem__echo" {
		t.Errorf("after the search the request carries %v", got)
	}
	// A tool the conversation already called stays loaded (a resumed session).
	req.Messages = []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Part{llm.Call("c", "mcp__mem__pid", "{}")}}}
	if got := cat.Filter(req).Tools; len(got) != 3 {
		t.Errorf("with a call in the history the request carries %v", got)
	}
	if len(req.Tools) != len(tools)+1 {
		t.Error("Filter changed the request it was given")
	}
}

func text2(o Output) string {
	var b strings.Builder
	for _, p := range o.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}
