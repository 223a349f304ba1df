package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
)

// goldenRequests are requests covering the Responses request mapping.
func goldenRequests() map[string]*llm.Request {
	think := llmtest.Request()
	think.Thinking = llm.ThinkingHigh
	think.SessionID = "s-1"
	think.System = "sys \" \n <x> & é"
	think.MaxTokens = 5
	img := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look"),
		{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("img")}, llm.Text("there")}}},
		Tools: []llm.ToolSpec{{Name: "noargs"}}}
	return map[string]*llm.Request{"llmtest": llmtest.Request(), "thinking": think, "replay": goldenHistory("gpt-test"),
		"other": goldenHistory("gpt-other"), "images": img}
}

// goldenHistory is the history of responses_test.go (package openai_test).
func goldenHistory(model string) *llm.Request {
	reasoning := `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Plan."}],"encrypted_content":"gAAAAB-x"}`
	return &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Provider: llm.ProviderOpenAI, API: llm.APIOpenAIResponses, Model: model,
			StopReason: llm.StopToolUse, Content: []llm.Part{
				{Type: llm.PartThinking, Text: "Plan.", Signature: reasoning},
				{Type: llm.PartText, Text: "Reading.", Signature: "msg_1"},
				{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "call_1", Name: "read", Arguments: `{"path":"a"}`}, Signature: "fc_1"},
				{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "call_2", Name: "read", Arguments: `{"path":`}, Signature: "fc_2"},
			}},
		{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read", Content: []llm.Part{llm.Text("A"),
			{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("img")}}},
	}}
}

// TestEncodeRequestMatchesSDK checks that the body rein writes is, as JSON, the body the
// openai-go SDK's parameter types encoded: testdata/sdkbody holds the SDK's encoding of
// goldenRequests (recorded with openai-go v3.99.0, "stream": true added as its NewStreaming
// did, before the SDK was dropped).
func TestEncodeRequestMatchesSDK(t *testing.T) {
	for name, req := range goldenRequests() {
		got, err := encodeRequest(&Config{Model: "gpt-test", MaxTokens: 1024}, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, rerr := os.ReadFile(filepath.Join("testdata", "sdkbody", name+".json"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		var g, w map[string]any
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

func TestEncodeRequestRejectsBadSchema(t *testing.T) {
	for _, schema := range []string{`[1]`, `{"type":`, `"x"`} {
		req := &llm.Request{Messages: []llm.Message{llm.UserText("x")}, Tools: []llm.ToolSpec{{Name: "t", Schema: json.RawMessage(schema)}}}
		if _, err := encodeRequest(&Config{Model: "m"}, req); err == nil || err.Kind != llm.KindInvalid {
			t.Errorf("schema %s: err %v, want KindInvalid", schema, err)
		}
	}
}
