package command

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/llm"
)

// TranscriptFile is the name of the transcript in a session's directory.
const TranscriptFile = "transcript.jsonl"

// Transcript writes a session's messages as a Claude Code transcript (JSONL), for hooks that
// read transcript_path: one compact JSON object per line — "user" records (prompts, with the
// text as a string; tool results as tool_result blocks, with toolUseResult) and "assistant"
// records (message in the Messages API shape, tool_use blocks under Claude Code's tool names
// and input shapes) — chained by uuid/parentUuid and carrying sessionId, timestamp and cwd.
// It is derived from the session ledger, which stays the record of truth: [Transcript.Write]
// rewrites the file (atomically) from the messages it is given, with uuids that depend only
// on the session and the message's place, so rewrites keep them.
type Transcript struct {
	Path      string
	SessionID string
	Cwd       string
	// Version is the "version" of each record (rein's).
	Version string
}

// record is one transcript line.
type record struct {
	ParentUUID    *string         `json:"parentUuid"`
	IsSidechain   bool            `json:"isSidechain"`
	UserType      string          `json:"userType"`
	Cwd           string          `json:"cwd"`
	SessionID     string          `json:"sessionId"`
	Version       string          `json:"version"`
	Type          string          `json:"type"`
	Message       any             `json:"message"`
	UUID          string          `json:"uuid"`
	Timestamp     string          `json:"timestamp"`
	ToolUseResult json.RawMessage `json:"toolUseResult,omitempty"`
}

type block map[string]any

// Write rewrites the transcript from msgs (the session's context, oldest first).
func (t *Transcript) Write(msgs []llm.Message) error {
	var buf bytes.Buffer
	var parent *string
	names := map[string]string{} // tool call id → rein tool name
	for i, m := range msgs {
		rec := record{ParentUUID: parent, UserType: "external", Cwd: t.Cwd, SessionID: t.SessionID, Version: t.Version,
			UUID: t.uuid(i), Timestamp: stamp(m.Time)}
		switch m.Role {
		case llm.RoleUser:
			rec.Type, rec.Message = "user", map[string]any{"role": "user", "content": userContent(m)}
		case llm.RoleAssistant:
			rec.Type, rec.Message = "assistant", t.assistant(m, i, names)
		case llm.RoleTool:
			rec.Type = "user"
			rec.Message = map[string]any{"role": "user", "content": []block{{"type": "tool_result", "tool_use_id": m.ToolCallID,
				"content": m.Text(), "is_error": m.IsError}}}
			tool := names[m.ToolCallID]
			if tool == "" {
				tool = m.ToolName
			}
			rec.ToolUseResult = toolResponse(tool, nil, &m)
		default:
			continue
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
		u := rec.UUID
		parent = &u
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(t.Path, buf.Bytes(), 0o600)
}

func (t *Transcript) assistant(m llm.Message, i int, names map[string]string) map[string]any {
	var content []block
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText:
			content = append(content, block{"type": "text", "text": p.Text})
		case llm.PartThinking:
			content = append(content, block{"type": "thinking", "thinking": p.Text, "signature": p.Signature})
		case llm.PartToolCall:
			names[p.Call.ID] = p.Call.Name
			input := json.RawMessage(p.Call.Arguments)
			if in, err := toClaude(p.Call.Name, input, t.Cwd); err == nil {
				input = in
			}
			if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			content = append(content, block{"type": "tool_use", "id": p.Call.ID,
				"name": hookToolName(p.Call.Name, json.RawMessage(p.Call.Arguments)), "input": input})
		}
	}
	if content == nil {
		content = []block{}
	}
	id := m.ResponseID
	if id == "" {
		id = "msg_" + t.uuid(i)
	}
	stop := map[llm.StopReason]string{llm.StopEnd: "end_turn", llm.StopToolUse: "tool_use", llm.StopLength: "max_tokens"}[m.StopReason]
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": m.Model, "content": content,
		"stop_reason": nilIfEmpty(stop), "stop_sequence": nil}
	if u := m.Usage; u != nil {
		msg["usage"] = map[string]int{"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite}
	}
	return msg
}

// userContent is a prompt's content: a string when it is only text, blocks otherwise.
func userContent(m llm.Message) any {
	var blocks []block
	textOnly := true
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText:
			blocks = append(blocks, block{"type": "text", "text": p.Text})
		case llm.PartImage:
			textOnly = false
			blocks = append(blocks, block{"type": "image", "source": map[string]any{"type": "base64", "media_type": p.MIMEType, "data": p.Data}})
		}
	}
	if textOnly {
		return m.Text()
	}
	return blocks
}

// uuid is the i-th record's id: a version-4-shaped UUID from the session id and i.
func (t *Transcript) uuid(i int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", t.SessionID, i)))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func stamp(ms int64) string {
	if ms <= 0 {
		return time.Unix(0, 0).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
