package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// responder writes one response in either API's format.
type responder struct {
	w            http.ResponseWriter
	flusher      http.Flusher
	buf          bytes.Buffer
	delay        time.Duration
	model        string
	id           int
	promptTokens int
	outBytes     int
	started      bool
}

// event appends one server-sent event; with a token delay it is sent at once, after the wait.
func (r *responder) event(name string, data any) {
	if r.delay > 0 && r.started {
		r.flush()
		time.Sleep(r.delay)
	}
	r.started = true
	if name != "" {
		r.buf.WriteString("event: " + name + "\n")
	}
	r.buf.WriteString("data: ")
	switch d := data.(type) {
	case string:
		r.buf.WriteString(d)
	default:
		b, _ := json.Marshal(d)
		r.buf.Write(b)
	}
	r.buf.WriteString("\n\n")
}

func (r *responder) flush() {
	if r.buf.Len() == 0 {
		return
	}
	r.w.Write(r.buf.Bytes())
	r.buf.Reset()
	if r.flusher != nil {
		r.flusher.Flush()
	}
}

func (r *responder) sse() {
	h := r.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	r.w.WriteHeader(http.StatusOK)
}

func (r *responder) outputTokens() int { return r.outBytes/4 + 1 }

type obj = map[string]any

// OpenAI Chat Completions.

func (r *responder) chunk(delta obj, finish any) {
	r.event("", obj{"id": "chatcmpl-mock-" + strconv.Itoa(r.id), "object": "chat.completion.chunk",
		"created": time.Now().Unix(), "model": r.model,
		"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}})
}

func (r *responder) openAIStream(t *Turn) {
	r.sse()
	r.chunk(obj{"role": "assistant", "content": ""}, nil)
	for _, tok := range tokens(t.Text) {
		r.outBytes += len(tok)
		r.chunk(obj{"content": tok}, nil)
	}
	for i, c := range t.Calls {
		id := fmt.Sprintf("call_%d_%d", r.id, i)
		r.chunk(obj{"tool_calls": []obj{{"index": i, "id": id, "type": "function",
			"function": obj{"name": c.Name, "arguments": ""}}}}, nil)
		for _, piece := range chunks(string(c.Args)) {
			r.outBytes += len(piece)
			r.chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": piece}}}}, nil)
		}
	}
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	r.chunk(obj{}, finish)
	r.event("", obj{"id": "chatcmpl-mock-" + strconv.Itoa(r.id), "object": "chat.completion.chunk",
		"created": time.Now().Unix(), "model": r.model, "choices": []obj{},
		"usage": obj{"prompt_tokens": r.promptTokens, "completion_tokens": r.outputTokens(),
			"total_tokens": r.promptTokens + r.outputTokens()}})
	r.event("", "[DONE]")
}

func (r *responder) openAIWhole(t *Turn) {
	msg := obj{"role": "assistant", "content": t.Text}
	finish := "stop"
	if len(t.Calls) > 0 {
		var calls []obj
		for i, c := range t.Calls {
			calls = append(calls, obj{"id": fmt.Sprintf("call_%d_%d", r.id, i), "type": "function",
				"function": obj{"name": c.Name, "arguments": string(c.Args)}})
			r.outBytes += len(c.Args)
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	r.outBytes += len(t.Text)
	r.whole(obj{"id": "chatcmpl-mock-" + strconv.Itoa(r.id), "object": "chat.completion",
		"created": time.Now().Unix(), "model": r.model,
		"choices": []obj{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": obj{"prompt_tokens": r.promptTokens, "completion_tokens": r.outputTokens(),
			"total_tokens": r.promptTokens + r.outputTokens()}})
}

func (r *responder) whole(v any) {
	b, _ := json.Marshal(v)
	r.w.Header().Set("Content-Type", "application/json")
	r.buf.Write(b)
}

// Anthropic Messages.

func (r *responder) anthropicStream(t *Turn) {
	r.sse()
	r.event("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_mock_" + strconv.Itoa(r.id), "type": "message", "role": "assistant", "model": r.model,
		"content": []obj{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": r.promptTokens, "output_tokens": 1}}})
	index := 0
	if t.Text != "" {
		r.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "text", "text": ""}})
		for _, tok := range tokens(t.Text) {
			r.outBytes += len(tok)
			r.event("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "text_delta", "text": tok}})
		}
		r.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	for i, c := range t.Calls {
		r.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "tool_use", "id": fmt.Sprintf("toolu_mock_%d_%d", r.id, i),
				"name": c.Name, "input": obj{}}})
		for _, piece := range chunks(string(c.Args)) {
			r.outBytes += len(piece)
			r.event("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "input_json_delta", "partial_json": piece}})
		}
		r.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	r.event("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"output_tokens": r.outputTokens()}})
	r.event("message_stop", obj{"type": "message_stop"})
}

func (r *responder) anthropicWhole(t *Turn) {
	var content []obj
	if t.Text != "" {
		content = append(content, obj{"type": "text", "text": t.Text})
		r.outBytes += len(t.Text)
	}
	for i, c := range t.Calls {
		content = append(content, obj{"type": "tool_use", "id": fmt.Sprintf("toolu_mock_%d_%d", r.id, i),
			"name": c.Name, "input": c.Args})
		r.outBytes += len(c.Args)
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	r.whole(obj{"id": "msg_mock_" + strconv.Itoa(r.id), "type": "message", "role": "assistant",
		"model": r.model, "content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": obj{"input_tokens": r.promptTokens, "output_tokens": r.outputTokens()}})
}

// OpenAI Responses (what Codex speaks): a streamed response of output items.

func (r *responder) responsesStream(t *Turn) {
	r.sse()
	id := "resp_mock_" + strconv.Itoa(r.id)
	r.event("response.created", obj{"type": "response.created", "response": obj{"id": id, "object": "response",
		"status": "in_progress", "model": r.model, "output": []obj{}}})
	var output []obj
	if t.Text != "" {
		msgID := "msg_mock_" + strconv.Itoa(r.id)
		r.event("response.output_item.added", obj{"type": "response.output_item.added", "output_index": 0,
			"item": obj{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []obj{}}})
		for _, tok := range tokens(t.Text) {
			r.outBytes += len(tok)
			r.event("response.output_text.delta", obj{"type": "response.output_text.delta", "item_id": msgID,
				"output_index": 0, "content_index": 0, "delta": tok})
		}
		item := obj{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []obj{{"type": "output_text", "text": t.Text, "annotations": []obj{}}}}
		r.event("response.output_item.done", obj{"type": "response.output_item.done", "output_index": 0, "item": item})
		output = append(output, item)
	}
	for i, c := range t.Calls {
		r.outBytes += len(c.Args)
		item := obj{"type": "function_call", "id": fmt.Sprintf("fc_mock_%d_%d", r.id, i),
			"call_id": fmt.Sprintf("call_%d_%d", r.id, i), "name": c.Name, "arguments": string(c.Args), "status": "completed"}
		r.event("response.output_item.added", obj{"type": "response.output_item.added", "output_index": len(output), "item": item})
		r.event("response.output_item.done", obj{"type": "response.output_item.done", "output_index": len(output), "item": item})
		output = append(output, item)
	}
	r.event("response.completed", obj{"type": "response.completed", "response": obj{"id": id, "object": "response",
		"status": "completed", "model": r.model, "output": output,
		"usage": obj{"input_tokens": r.promptTokens, "output_tokens": r.outputTokens(),
			"total_tokens": r.promptTokens + r.outputTokens(), "input_tokens_details": obj{"cached_tokens": 0},
			"output_tokens_details": obj{"reasoning_tokens": 0}}}})
}
