// Package mcp is rein's MCP client: the configured servers ([Resolve]), their connections
// ([Open], [Manager]) and their tools as rein tools ([Tool], [Catalog]).
//
// The client is rein's own, kept to what rein uses of the protocol: JSON-RPC 2.0 over the
// stdio transport (one message per line on a process's standard input and output, the
// process started through internal/proc) and the Streamable HTTP transport (every message
// POSTed with "Accept: application/json, text/event-stream", the answer a JSON body or an
// event stream; Mcp-Session-Id as the server gives it, MCP-Protocol-Version after
// initialize, DELETE of the session on close, no standalone GET stream, an answer stream
// cut after a numbered event resumed once with Last-Event-ID).
//
// A session is: initialize (offering protocolVersion, accepting any of protocolVersions),
// notifications/initialized, tools/list page by page (nextCursor), tools/call with the
// arguments as given. The client advertises no capabilities; of the server's requests it
// answers ping and refuses every other with -32601; it follows
// notifications/tools/list_changed by listing again and sends notifications/cancelled when
// a call's context ends first. What a server sends is parsed strictly: one message (or a
// batch) per line, body or event, at most maxMessage bytes; members rein does not know are
// ignored, as JSON-RPC asks; anything that is not a JSON-RPC 2.0 message ends the
// connection with an error naming the server (a stdio server that ends is started again on
// the next call, at most maxRestarts times).
//
// The go-sdk is a test dependency only: its server implementation is the independent peer
// the tests run rein's client against (in-process over pipes and over HTTP), with the npm
// reference servers (npm_test.go) and raw servers written in the tests for what a
// well-behaved server never sends.
package mcp
