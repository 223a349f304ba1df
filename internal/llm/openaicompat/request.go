package openaicompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/oaisdk"
)

// writeBody encodes a request as a Chat Completions body, "stream": true included, into w.
//
// The body is written directly rather than through the SDK's parameter types: their
// reflection-based encoder cost milliseconds per request on long sessions, which every turn
// paid again for the whole history. The wire is the same (a test compares the two encodings).
// Tool schemas are sent as given, compacted; a schema that is not a JSON object is an
// llm.KindInvalid error naming the tool. With a message cache, the messages it holds are not
// encoded or copied again: w refers to the cache's bytes.
func writeBody(w *bodyWriter, cfg *Config, req *llm.Request, schemas *schemaCache, msgs *msgCache) *llm.Error {
	w.b = append(w.b, `{"stream":true,"model":`...)
	w.b = jsonenc.Text(w.b, cfg.Model)
	w.b = append(w.b, `,"messages":`...)
	appendMessages(w, req, msgs)
	b := w.b
	b = append(b, `,"stream_options":{"include_usage":true}`...)
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"function","function":{"name":`...)
			b = jsonenc.Text(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = jsonenc.Text(b, t.Description)
			}
			b = append(b, `,"parameters":`...)
			var err *llm.Error
			if b, err = schemas.append(b, t); err != nil {
				return err
			}
			if cfg.Compat.StrictField {
				b = append(b, `,"strict":false`...)
			}
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if n := maxTokens(req, cfg.MaxTokens); n > 0 {
		b = append(b, ',')
		b = jsonenc.Text(b, cfg.Compat.MaxTokensField)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	if cfg.Compat.ReasoningEffort && req.Thinking != "" && req.Thinking != llm.ThinkingOff {
		b = append(b, `,"reasoning_effort":`...)
		b = jsonenc.Text(b, string(req.Thinking))
	}
	if cfg.Compat.PromptCacheKey && req.SessionID != "" {
		b = append(b, `,"prompt_cache_key":`...)
		b = jsonenc.Text(b, req.SessionID)
	}
	w.b = append(b, '}')
	return nil
}

// schemaCache keeps the compacted schema of each tool, which every request of a run sends
// again. A nil cache compacts every time.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]compactSchema // by tool name
}

type compactSchema struct{ raw, compact []byte }

// append appends a tool's parameters: its schema compacted, or an empty object schema.
func (c *schemaCache) append(b []byte, t llm.ToolSpec) ([]byte, *llm.Error) {
	if c == nil {
		return appendSchema(b, t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[t.Name]; ok && bytes.Equal(e.raw, t.Schema) {
		return append(b, e.compact...), nil
	}
	start := len(b)
	b, err := appendSchema(b, t)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]compactSchema{}
	}
	c.m[t.Name] = compactSchema{raw: bytes.Clone(t.Schema), compact: bytes.Clone(b[start:])}
	return b, nil
}

// appendSchema appends a tool's parameters: its schema compacted, or an empty object schema.
func appendSchema(b []byte, t llm.ToolSpec) ([]byte, *llm.Error) {
	s := bytes.TrimSpace(t.Schema)
	if len(s) == 0 {
		return append(b, `{"type":"object","properties":{}}`...), nil
	}
	if s[0] != '{' || !json.Valid(s) {
		return nil, &llm.Error{Kind: llm.KindInvalid, Message: fmt.Sprintf("tool %q: the schema is not a JSON object", t.Name)}
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, s); err != nil {
		return nil, &llm.Error{Kind: llm.KindInvalid, Message: fmt.Sprintf("tool %q: the schema is not a JSON object", t.Name)}
	}
	return buf.Bytes(), nil
}

func maxTokens(req *llm.Request, fallback int) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return fallback
}

// appendText appends a message without images: user text, assistant text and tool calls, or a
// tool result's text. It appends nothing for an assistant message with neither text nor calls.
func appendText(b []byte, m *llm.Message) []byte {
	switch m.Role {
	case llm.RoleUser:
		text, _ := splitImages(m.Content)
		b = append(b, `{"role":"user","content":`...)
		b = jsonenc.Text(b, text)
		return append(b, '}')
	case llm.RoleAssistant:
		text, calls := m.Text(), m.ToolCalls()
		if text == "" && len(calls) == 0 {
			return b
		}
		b = append(b, `{"role":"assistant"`...)
		if text != "" {
			b = append(b, `,"content":`...)
			b = jsonenc.Text(b, text)
		}
		if len(calls) > 0 {
			b = append(b, `,"tool_calls":[`...)
			for j, c := range calls {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = jsonenc.Text(b, c.ID)
				b = append(b, `,"type":"function","function":{"name":`...)
				b = jsonenc.Text(b, c.Name)
				b = append(b, `,"arguments":`...)
				b = jsonenc.Text(b, oaisdk.HistoryArguments(c.Arguments))
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		return append(b, '}')
	case llm.RoleTool:
		text, _ := splitImages(m.Content)
		if text == "" {
			text = "(no output)"
		}
		return appendTool(b, text, m.ToolCallID)
	}
	return b
}

func appendTool(b []byte, text, callID string) []byte {
	b = append(b, `{"role":"tool","content":`...)
	b = jsonenc.Text(b, text)
	b = append(b, `,"tool_call_id":`...)
	b = jsonenc.Text(b, callID)
	return append(b, '}')
}

func hasImage(parts []llm.Part) bool {
	for i := range parts {
		if parts[i].Type == llm.PartImage {
			return true
		}
	}
	return false
}

// splitImages returns the text parts joined by newlines and the image parts.
func splitImages(parts []llm.Part) (string, []llm.Part) {
	var texts []string
	var images []llm.Part
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			texts = append(texts, p.Text)
		case llm.PartImage:
			images = append(images, p)
		}
	}
	if len(texts) == 1 {
		return texts[0], images
	}
	return strings.Join(texts, "\n"), images
}

func appendUser(b []byte, parts []llm.Part) []byte {
	text, images := splitImages(parts)
	b = append(b, `{"role":"user","content":`...)
	if len(images) == 0 {
		b = jsonenc.Text(b, text)
		return append(b, '}')
	}
	b = append(b, '[')
	n := 0
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"text","text":`...)
			b = jsonenc.Text(b, p.Text)
			b = append(b, '}')
			n++
		case llm.PartImage:
			if n > 0 {
				b = append(b, ',')
			}
			b = appendImage(b, p)
			n++
		}
	}
	return append(b, "]}"...)
}

func appendImage(b []byte, p llm.Part) []byte {
	b = append(b, `{"type":"image_url","image_url":{"url":`...)
	b = jsonenc.Text(b, oaisdk.DataURL(p))
	return append(b, "}}"...)
}
