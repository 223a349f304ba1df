package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
)

// protocolVersion is the version rein offers in initialize (the newest one with the
// initialize handshake), and protocolVersions those it accepts in the answer, newest first.
const protocolVersion = "2025-11-25"

var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// The MCP methods rein sends and answers.
const (
	methodInitialize       = "initialize"
	methodInitialized      = "notifications/initialized"
	methodToolsList        = "tools/list"
	methodToolsCall        = "tools/call"
	methodPing             = "ping"
	methodCancelled        = "notifications/cancelled"
	methodToolsListChanged = "notifications/tools/list_changed"
)

// implementation names a client or server.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ClientInfo      implementation `json:"clientInfo"`
}

// initializeResult is what rein reads of a server's answer to initialize.
type initializeResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Instructions    string `json:"instructions"`
}

func (r *initializeResult) check() error {
	if !slices.Contains(protocolVersions, r.ProtocolVersion) {
		return fmt.Errorf("the server speaks MCP protocol version %q; rein speaks %v", r.ProtocolVersion, protocolVersions)
	}
	return nil
}

// mcpTool is one tool of a tools/list answer.
type mcpTool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	InputSchema json.RawMessage  `json:"inputSchema"`
	Annotations *toolAnnotations `json:"annotations"`
}

type toolAnnotations struct {
	ReadOnlyHint bool `json:"readOnlyHint"`
}

func (t *mcpTool) readOnly() bool { return t.Annotations != nil && t.Annotations.ReadOnlyHint }

type listToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type listToolsResult struct {
	Tools      []*mcpTool `json:"tools"`
	NextCursor string     `json:"nextCursor"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// callToolResult is a tools/call answer.
type callToolResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// content is one content block of a result; Type says which fields apply.
type content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text"`
	Data     []byte            `json:"data"` // image, audio: base64 on the wire
	MIMEType string            `json:"mimeType"`
	URI      string            `json:"uri"`  // resource_link
	Name     string            `json:"name"` // resource_link
	Resource *embeddedResource `json:"resource"`
}

type embeddedResource struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     []byte `json:"blob"`
}

type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}
