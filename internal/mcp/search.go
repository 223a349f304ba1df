package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/reinhq/rein/internal/lazy"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// SearchToolName is the name of the tool that searches MCP tools when their schemas are
// loaded on demand.
const SearchToolName = "mcp_search"

// Search limits: results per call by default and at most.
const (
	defaultResults = 5
	maxResults     = 10
)

// Catalog holds the MCP tools of a run whose schemas are loaded on demand: the model sees
// [Catalog.SearchTool] instead of them, and a tool's schema joins the requests once a search
// returned it (or the conversation already called it). Every tool stays in the run's tool
// set, so a call goes through validation, permission rules and hooks by its own name
// whether or not its schema was loaded. Safe for concurrent use.
type Catalog struct {
	tools  []*Tool
	byName map[string]*Tool
	mu     sync.Mutex
	loaded map[string]bool
}

// NewCatalog returns a catalog over tools.
func NewCatalog(tools []*Tool) *Catalog {
	c := &Catalog{tools: tools, byName: map[string]*Tool{}, loaded: map[string]bool{}}
	for _, t := range tools {
		c.byName[t.spec.Name] = t
	}
	return c
}

// Lazy reports whether tools should be loaded on demand under threshold.
func Lazy(tools []*Tool, threshold int) bool { return len(tools) > threshold }

// Model wraps a model so that each request carries the schemas of loaded MCP tools only.
func (c *Catalog) Model(inner llm.Model) llm.Model {
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		return inner.Stream(ctx, c.Filter(req), emit)
	})
}

// Filter returns req without the tool specs of MCP tools neither loaded by a search nor
// called earlier in req's messages; req itself is not changed.
func (c *Catalog) Filter(req *llm.Request) *llm.Request {
	called := map[string]bool{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls() {
			called[tc.Name] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := *req
	out.Tools = nil
	for _, ts := range req.Tools {
		if _, mcpTool := c.byName[ts.Name]; mcpTool && !c.loaded[ts.Name] && !called[ts.Name] {
			continue
		}
		out.Tools = append(out.Tools, ts)
	}
	return &out
}

// SearchTool returns the tool the model searches MCP tools with.
func (c *Catalog) SearchTool() tool.Tool { return searchTool{c} }

type searchTool struct{ c *Catalog }

type searchArgs struct {
	Query string `json:"query" jsonschema:"words to look for in tool names and descriptions, or exact tool names separated by spaces"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many tools to return (default 5, at most 10)"`
}

// searchSchema is the search tool's schema, made on first use.
func searchSchema() json.RawMessage { return searchSchemaOnce.Get(newSearchSchema) }

func newSearchSchema() json.RawMessage { return tool.MustSchemaFor[searchArgs]() }

var searchSchemaOnce lazy.Value[json.RawMessage]

func (s searchTool) Spec() tool.Spec {
	servers := map[string]int{}
	for _, t := range s.c.tools {
		servers[t.srv.cfg.Name]++
	}
	var list []string
	for _, n := range slicesSorted(servers) {
		list = append(list, fmt.Sprintf("%s (%d)", n, servers[n]))
	}
	return tool.Spec{
		Name: SearchToolName,
		Description: fmt.Sprintf("Search the %d tools of the connected MCP servers: %s. Returns the best matches with their names, "+
			"descriptions and argument schemas; a tool returned here can then be called by its name (mcp__<server>__<tool>). "+
			"Search before saying a capability is missing.", len(s.c.tools), strings.Join(list, ", ")),
		Snippet: "search the tools of the connected MCP servers and load them",
		Schema:  searchSchema(),
		Replay:  tool.ReplaySafe,
	}
}

func (s searchTool) Run(_ context.Context, call tool.Call) (tool.Result, error) {
	var a searchArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	limit := a.Limit
	if limit <= 0 {
		limit = defaultResults
	}
	limit = min(limit, maxResults)
	found := s.c.search(a.Query, limit)
	if len(found) == 0 {
		return tool.TextResult(fmt.Sprintf("No MCP tool matches %q. Try other words (a verb, the thing it acts on) or a server name.", a.Query)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d MCP tools loaded; call them by name:\n", len(found))
	var names []string
	for _, t := range found {
		names = append(names, t.spec.Name)
		fmt.Fprintf(&b, "\n## %s\n%s\nArguments schema: %s\n", t.spec.Name, t.spec.Description, t.spec.Schema)
	}
	return tool.Result{Content: tool.TextResult(b.String()).Content, Details: map[string]any{"loaded": names}}, nil
}

// search ranks tools by how many query words their names and descriptions hold (a word in
// the name counts three times; an exact name wins outright) and marks the best loaded.
func (c *Catalog) search(query string, limit int) []*Tool {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		t     *Tool
		score int
	}
	var hits []hit
	for i, t := range c.tools {
		name := strings.ToLower(t.spec.Name + " " + t.mcpName)
		desc := strings.ToLower(t.spec.Description)
		score := 0
		for _, w := range words {
			switch {
			case w == strings.ToLower(t.spec.Name) || w == strings.ToLower(t.mcpName):
				score += 100
			case strings.Contains(name, w):
				score += 3
			case strings.Contains(desc, w):
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{c.tools[i], score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	var out []*Tool
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range hits[:min(limit, len(hits))] {
		c.loaded[h.t.spec.Name] = true
		out = append(out, h.t)
	}
	return out
}

func slicesSorted(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
