package anthropic_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/llmtest"
)

// bodyRequests are requests covering every branch of the message mapping.
func bodyRequests() map[string]*llm.Request {
	img := llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}
	call := &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path": "a.txt"}`}
	bad := &llm.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command": "ec`}
	odd := "quote \" backslash \\ nl \n cr \r tab \t nul \x00 esc \x1b del \x7f <html> & é 漢字 🙂 \u2028 \u2029 bad \xff\xfe end"
	same := func(m llm.Message) llm.Message {
		m.Provider, m.API, m.Model = llm.ProviderAnthropic, llm.APIAnthropicMessages, testModel
		return m
	}
	signed := llm.Part{Type: llm.PartThinking, Text: "signed thought", Signature: "sig-1"}
	redacted := llm.Part{Type: llm.PartThinking, Redacted: true, Signature: "opaque-1"}
	history := []llm.Message{
		llm.UserText("hello " + odd),
		{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look:"), img, llm.Text("")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("hmm"), llm.Text("I will read."), {Type: llm.PartToolCall, Call: call},
			{Type: llm.PartToolCall, Call: bad}}, StopReason: llm.StopToolUse},
		llm.ToolResultText(call, "contents "+odd, false),
		{Role: llm.RoleTool, ToolCallID: "c2", ToolName: "bash", Content: []llm.Part{img, llm.Text("and text")}, IsError: true},
		{Role: llm.RoleTool, ToolCallID: "c3", ToolName: "bash"},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("failed")}, StopReason: llm.StopError},
		same(llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{signed, redacted, llm.Text("same model")}, StopReason: llm.StopEnd}),
		llm.UserText("again"),
		{Role: llm.RoleAssistant, Content: []llm.Part{signed, redacted, llm.Thinking("only thinking")}, StopReason: llm.StopEnd},
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "c4", Name: "ls", Arguments: "{}"}}}, StopReason: llm.StopToolUse},
		{Role: llm.RoleTool, ToolCallID: "c4", ToolName: "ls"},
		llm.UserText("next"),
	}
	tools := []llm.ToolSpec{
		{Name: "read", Description: "Reads.", Schema: json.RawMessage(` {"type": "object", "properties": {"path": {"type": "string", "description": "a <path>"}}, "required": ["path"]} `)},
		{Name: "noargs"},
		{Name: "badschema", Schema: json.RawMessage(`[1]`)},
	}
	return map[string]*llm.Request{
		"llmtest":      llmtest.Request(),
		"rich":         {System: "system " + odd, Messages: history, Tools: tools, MaxTokens: 123, Thinking: llm.ThinkingHigh, SessionID: "s-1"},
		"bare":         {Messages: []llm.Message{llm.UserText("")}},
		"thinking off": {Messages: history[:1], Thinking: llm.ThinkingOff},
		"image last":   {Messages: history[:2], Thinking: llm.ThinkingLow, MaxTokens: 4000},
		"tool last":    {Messages: history[:4]},
	}
}

// TestBodyMatchesSDK checks that the request body is, as JSON, the body the Anthropic SDK
// (anthropic-sdk-go v2.15.0) wrote for bodyRequests: testdata/sdkbody holds what it sent,
// recorded (REIN_RECORD_SDKBODY=1) before the SDK was dropped.
func TestBodyMatchesSDK(t *testing.T) {
	for name, req := range bodyRequests() {
		url, bodies := serve(t, 200, nil, fixture(t, "text"))
		m := anthropic.New(anthropic.Config{Model: testModel, BaseURL: url, APIKey: "k", MaxTokens: 64000})
		m.Stream(context.Background(), req, func(llm.Event) {})
		if len(*bodies) != 1 {
			t.Fatalf("%s: %d requests", name, len(*bodies))
		}
		got := (*bodies)[0]
		file := filepath.Join("testdata", "sdkbody", strings.ReplaceAll(name, " ", "_")+".json")
		if os.Getenv("REIN_RECORD_SDKBODY") == "1" {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: invalid JSON: %v\n%s", name, err, got)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
