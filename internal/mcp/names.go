package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name every provider accepts (^[a-zA-Z0-9_-]{1,64}$).
const MaxNameLen = 64

// Prefix starts the name of every MCP tool.
const Prefix = "mcp__"

// ToolName returns the name rein gives a server's tool: mcp__<server>__<tool>, with every
// character outside [A-Za-z0-9_-] replaced by "_". A name longer than [MaxNameLen] keeps its
// beginning and ends in "_" and 8 hex digits of a hash of the full name, so distinct long
// names stay distinct.
func ToolName(server, tool string) string {
	name := Prefix + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return name[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, c := range s {
		if c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
