package contextpack_test

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm"
)

func TestEstimatorFor(t *testing.T) {
	for _, tc := range []struct{ provider, model, want string }{
		{"openai", "gpt-5", "o200k_base"},
		{"openai", "gpt-5-mini", "o200k_base"},
		{"openai", "gpt-5.1", "o200k_base"},
		{"openai", "gpt-4o", "o200k_base"},
		{"openai", "gpt-4o-mini-2024-07-18", "o200k_base"},
		{"openai", "gpt-4.1-nano", "o200k_base"},
		{"openai", "o1", "o200k_base"},
		{"openai", "o3-mini", "o200k_base"},
		{"openai", "o4-mini", "o200k_base"},
		{"openai", "gpt-4", "cl100k_base"},
		{"openai", "gpt-4-turbo", "cl100k_base"},
		{"openai", "gpt-3.5-turbo", "cl100k_base"},
		{"openai", "o10-preview", "cl100k_base"}, // not the o-series prefix o1-
		{"anthropic", "claude-sonnet-4-5", "bytes/4"},
		{"openai-compat", "gpt-4o", "bytes/4"}, // any server may host any tokenizer
		{"script", "script", "bytes/4"},
		{"", "", "bytes/4"},
	} {
		if got := contextpack.EstimatorFor(tc.provider, tc.model).Name(); got != tc.want {
			t.Errorf("EstimatorFor(%q, %q) = %s, want %s", tc.provider, tc.model, got, tc.want)
		}
	}
}

// TestEstimatorVectors checks counts published with OpenAI's tokenizers.
func TestEstimatorVectors(t *testing.T) {
	o200k := contextpack.EstimatorFor("openai", "gpt-5")
	cl100k := contextpack.EstimatorFor("openai", "gpt-4")
	for _, tc := range []struct {
		est  contextpack.Estimator
		text string
		want int
	}{
		{o200k, "hello world", 2},
		{cl100k, "hello world", 2},
		{cl100k, "tiktoken is great!", 6},
		{o200k, "你好，世界", 3},
		{cl100k, "你好，世界", 6},
		{o200k, "", 0},
		{o200k, "\xff\xfe invalid UTF-8", o200k.Tokens("\xff\xfe invalid UTF-8")}, // no panic
		{contextpack.Bytes4{}, "", 0},
		{contextpack.Bytes4{}, "a", 1},
		{contextpack.Bytes4{}, "abcd", 1},
		{contextpack.Bytes4{}, "abcde", 2},
	} {
		if got := tc.est.Tokens(tc.text); got != tc.want {
			t.Errorf("%s.Tokens(%q) = %d, want %d", tc.est.Name(), tc.text, got, tc.want)
		}
	}
}

func TestRequestSections(t *testing.T) {
	est := contextpack.Bytes4{}
	spec := llm.ToolSpec{Name: "ls", Description: "List a directory", Schema: json.RawMessage(`{"type":"object"}`)}
	ts := contextpack.ToolSection(spec, est)
	wantJSON, _ := json.Marshal(spec)
	if ts.Name != contextpack.SectionTool || ts.Source != "ls" || ts.Text != string(wantJSON) || ts.Bytes != len(wantJSON) || ts.Tokens != est.Tokens(string(wantJSON)) {
		t.Errorf("tool section %+v", ts)
	}
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("hmm"), llm.Text("ok"), llm.Call("c1", "ls", `{}`)}}
	ms := contextpack.MessageSection(contextpack.SectionMessage, asst, est)
	if ms.Text != "hmmokls{}" || ms.Source != "assistant" || ms.Bytes != 9 || ms.Tokens != 3 {
		t.Errorf("assistant section %+v", ms)
	}
	res := llm.ToolResultText(&llm.ToolCall{ID: "c1", Name: "ls"}, "a.go\n", false)
	res.Content = append(res.Content, llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: make([]byte, 1000)})
	rs := contextpack.MessageSection(contextpack.SectionMessage, res, est)
	if rs.Source != "tool:ls" || rs.Bytes != 1005 || rs.Tokens != 2+contextpack.ImageTokens {
		t.Errorf("tool result section %+v", rs)
	}
	if ps := contextpack.MessageSection(contextpack.SectionPrompt, llm.UserText("hi"), nil); ps.Name != "prompt" || ps.Source != "user" || ps.Tokens != 0 {
		t.Errorf("prompt section %+v", ps)
	}
}
