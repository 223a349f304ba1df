package openaicompat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// bodyRequests are requests covering every branch of the message mapping.
func bodyRequests() map[string]*llm.Request {
	img := llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}
	call := &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path": "a.txt"}`}
	bad := &llm.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command": "ec`}
	odd := "quote \" backslash \\ nl \n cr \r tab \t nul \x00 esc \x1b del \x7f <html> & é 漢字 🙂 \u2028 \u2029 bad \xff\xfe end"
	history := []llm.Message{
		llm.UserText("hello " + odd),
		{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look:"), img, llm.Text("")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("hmm"), llm.Text("I will read."), {Type: llm.PartToolCall, Call: call},
			{Type: llm.PartToolCall, Call: bad}}, StopReason: llm.StopToolUse},
		llm.ToolResultText(call, "contents "+odd, false),
		{Role: llm.RoleTool, ToolCallID: "c2", ToolName: "bash", Content: []llm.Part{img}},
		{Role: llm.RoleTool, ToolCallID: "c3", ToolName: "bash"},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("failed")}, StopReason: llm.StopError},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("only thinking")}, StopReason: llm.StopEnd},
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: &llm.ToolCall{ID: "c4", Name: "ls", Arguments: "{}"}}}, StopReason: llm.StopToolUse},
		{Role: llm.RoleTool, ToolCallID: "c4", ToolName: "ls"},
		llm.UserText("next"),
	}
	tools := []llm.ToolSpec{
		{Name: "read", Description: "Reads.", Schema: json.RawMessage(` {"type": "object", "properties": {"path": {"type": "string", "description": "a <path>"}}, "required": ["path"]} `)},
		{Name: "noargs"},
	}
	return map[string]*llm.Request{
		"llmtest":      llmtest.Request(),
		"rich":         {System: "system " + odd, Messages: history, Tools: tools, MaxTokens: 123, Thinking: llm.ThinkingHigh, SessionID: "s-1"},
		"bare":         {Messages: []llm.Message{llm.UserText("")}},
		"thinking off": {Messages: history[:1], Thinking: llm.ThinkingOff},
	}
}

// TestEncodeBodyMatchesSDK checks that the body rein writes is, as JSON, the body the
// openai-go SDK's parameter types encoded, in both dialects: testdata/sdkbody holds the SDK's
// encoding of bodyRequests (recorded with openai-go v3.99.0, "stream": true added as its
// NewStreaming did, before the SDK was dropped).
func TestEncodeBodyMatchesSDK(t *testing.T) {
	for dialect, compat := range map[string]Compat{"local": {MaxTokensField: FieldMaxTokens}, "openai": OpenAI()} {
		cfg := &Config{Model: "m-1", BaseURL: "http://x", Compat: compat, MaxTokens: 77}
		for name, req := range bodyRequests() {
			got, err := encodeBody(nil, cfg, req, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var cache schemaCache
			var msgs msgCache
			for range 2 { // the second time from the caches
				cached, err := encodeBody(nil, cfg, req, &cache, &msgs)
				if err != nil || string(cached) != string(got) {
					t.Fatalf("%s: with a schema cache: %v\n%s\nwant %s", name, err, cached, got)
				}
			}
			want, rerr := os.ReadFile(filepath.Join("testdata", "sdkbody", dialect+"_"+strings.ReplaceAll(name, " ", "_")+".json"))
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
				t.Errorf("%s (%s):\n got %s\nwant %s", name, dialect, got, want)
			}
		}
	}
}

func TestEncodeBodyRejectsBadSchema(t *testing.T) {
	for _, schema := range []string{`[1]`, `{"type":`, `"x"`} {
		req := &llm.Request{Messages: []llm.Message{llm.UserText("x")}, Tools: []llm.ToolSpec{{Name: "t", Schema: json.RawMessage(schema)}}}
		if _, err := encodeBody(nil, &Config{Model: "m"}, req, &schemaCache{}, &msgCache{}); err == nil || err.Kind != llm.KindInvalid || !strings.Contains(err.Message, `"t"`) {
			t.Errorf("schema %s: %v", schema, err)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\x00\x01\x1f\x7f", "é漢🙂", "\u2028\u2029", "\xff", "a\xc3", "<>&"} {
		var back string
		if err := json.Unmarshal(jsonenc.Text(nil, s), &back); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q decodes to %q, want %q", s, back, wantBack)
		}
	}
}

// TestMessageCacheFollowsChanges encodes a conversation turn by turn with one cache, changing
// it the ways a session can (growth, failed messages, in-place edits, compaction, forks,
// images), and checks every body against an encoding without cache.
func TestMessageCacheFollowsChanges(t *testing.T) {
	cfg := &Config{Model: "m", Compat: Compat{MaxTokensField: FieldMaxTokens}}
	var schemas schemaCache
	var msgs msgCache
	img := llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{1, 2, 3}}
	check := func(step string, history []llm.Message) {
		t.Helper()
		req := &llm.Request{System: "sys", Messages: history}
		want, err := encodeBody(nil, cfg, req, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeBody(nil, cfg, req, &schemas, &msgs)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s:\n got %s\nwant %s", step, got, want)
		}
	}
	turn := func(i int) []llm.Message {
		call := &llm.ToolCall{ID: "c" + string(rune('a'+i)), Name: "read", Arguments: `{"path":"f"}`}
		return []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("step"), {Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse},
			llm.ToolResultText(call, "result "+string(rune('a'+i)), false),
		}
	}
	h := []llm.Message{llm.UserText("go")}
	check("first", h)
	for i := range 5 {
		h = append(h, turn(i)...)
		check("growth", h)
	}
	h[3].Content = []llm.Part{llm.Text("edited in place")} // a tool result's text replaced
	check("in-place edit", h)
	h[4].Content[0].Text = "another step" // an assistant text edited inside its slice
	check("in-place part edit", h)
	failed := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("oops")}, StopReason: llm.StopError}
	h = append(h[:5:5], append([]llm.Message{failed}, h[5:]...)...) // healing drops it: positions shift
	check("failed message", h)
	h = append(h, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look"), img}})
	check("user image", h)
	last := turn(7)
	last[1].Content = append(last[1].Content, img)
	h = append(h, last...)
	check("tool image", h)
	h = append(h, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Thinking("only thinking")}, StopReason: llm.StopEnd})
	check("empty assistant", h)
	h = append(h, llm.UserText("again"))
	check("after empty", h)
	compacted := append([]llm.Message{llm.UserText("summary of the earlier part")}, h[len(h)-4:]...)
	check("compaction", compacted)
	check("fork back to the long one", h)
	check("short prefix", h[:3])
	check("empty", nil)
	check("long again", h)
}

// BenchmarkEncodeBody encodes the request of turn 500 of a read loop (≈ 250 KB), with the
// caches of a run (every message but the last already encoded once).
func BenchmarkEncodeBody(b *testing.B) {
	req := &llm.Request{System: strings.Repeat("system prompt ", 70), Tools: bodyRequests()["rich"].Tools,
		Messages: []llm.Message{llm.UserText("loop")}}
	for i := range 500 {
		call := &llm.ToolCall{ID: "call_" + strings.Repeat("x", 20), Name: "read", Arguments: `{"path":"data/file-` + string(rune('0'+i%10)) + `.txt"}`}
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse},
			llm.ToolResultText(call, strings.Repeat("package data\n\n// Lorem ipsum dolor sit amet.\n", 8), false))
	}
	cfg := &Config{Model: "m", Compat: Compat{MaxTokensField: FieldMaxTokens}}
	var cache schemaCache
	var msgs msgCache
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeBody(nil, cfg, req, &cache, &msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestServerGetsTheEncodedBody checks that what reaches the server is, byte for byte, the body
// encodeBody writes ("stream": true first): the SDK rewrites only the placeholder. Requests
// run concurrently on one model, with histories of different lengths, so that a reused body
// buffer overwritten while another request sends it would show.
func TestServerGetsTheEncodedBody(t *testing.T) {
	var mu sync.Mutex
	got := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[string(b)] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chattest.Content("ok")+chattest.Finish("stop")+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	cfg := Config{Model: "m", BaseURL: srv.URL}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 24 {
		h := []llm.Message{llm.UserText("go")}
		for j := range i * 7 {
			h = append(h, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text(strings.Repeat("a", j))}, StopReason: llm.StopEnd},
				llm.UserText(strings.Repeat("u", i)))
		}
		req := &llm.Request{Messages: h}
		body, perr := encodeBody(nil, &m.cfg, req, nil, nil)
		if perr != nil {
			t.Fatal(perr)
		}
		want[string(body)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if msg := m.Stream(context.Background(), req, func(llm.Event) {}); msg.StopReason != llm.StopEnd {
					t.Errorf("request %d: %s: %v", i, msg.StopReason, msg.Err)
				}
			}
		}()
	}
	wg.Wait()
	for b := range got {
		if !want[b] {
			t.Fatalf("the server got a body no request encoded: %.200s", b)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the server got %d distinct bodies, want %d", len(got), len(want))
	}
	for b := range want {
		if !strings.HasPrefix(b, `{"stream":true,`) {
			t.Fatalf("body does not start with stream true: %.80s", b)
		}
	}
}

// TestSentBodyOutlivesCacheChanges checks that a body's segments, which refer to the message
// cache's bytes, keep their bytes while later requests change the cache: growth appended in
// place, an edit in the middle, a shorter fork, a compaction. Every body is compared, after all
// of them were encoded, with its encoding without cache.
func TestSentBodyOutlivesCacheChanges(t *testing.T) {
	cfg := &Config{Model: "m", Compat: Compat{MaxTokensField: FieldMaxTokens}}
	var schemas schemaCache
	var cache msgCache
	h := []llm.Message{llm.UserText("go")}
	for i := range 40 {
		call := &llm.ToolCall{ID: "c" + strings.Repeat("x", i), Name: "read", Arguments: `{"path":"f"}`}
		h = append(h, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse},
			llm.ToolResultText(call, strings.Repeat("r", i), false))
	}
	edited := slices.Clone(h)
	edited[6] = llm.ToolResultText(edited[5].Content[0].Call, "edited", false) // a result in the middle
	histories := [][]llm.Message{h[:11], h[:41], h, edited, h[:7], append([]llm.Message{llm.UserText("summary")}, h[60:]...), h}
	type sent struct {
		segs [][]byte
		want string
	}
	var all []sent
	for _, hist := range histories {
		req := &llm.Request{System: "sys", Messages: hist}
		want, err := encodeBody(nil, cfg, req, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := &bodyWriter{}
		if err := writeBody(w, cfg, req, &schemas, &cache); err != nil {
			t.Fatal(err)
		}
		segs, n := w.segments()
		if n != len(want) {
			t.Fatalf("%d messages: %d bytes, want %d", len(hist), n, len(want))
		}
		all = append(all, sent{segs, string(want)})
	}
	for i, s := range all {
		lease := &bodyLease{pool: &bodyBuffer{}, segs: s.segs}
		r, _ := lease.reader()
		got, _ := io.ReadAll(r)
		if string(got) != s.want {
			t.Fatalf("body %d changed after later requests:\n got %.300s\nwant %.300s", i, got, s.want)
		}
	}
}
