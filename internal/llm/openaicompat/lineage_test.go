package openaicompat

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// Every vouched request of the package's tests also compares what its lineage vouched for
// and panics when the vouch was false.
func init() { verifyVouched = true }

// VerifyVouched lets the benchmarks of the external test package turn the check off.
var VerifyVouched = &verifyVouched

// MessagesRead returns how many messages m's cache has read so far (see msgCache.read).
func MessagesRead(m *Model) int {
	m.msgs.mu.Lock()
	defer m.msgs.mu.Unlock()
	return m.msgs.read
}

// toolLoop is a user message and n tool round trips (an assistant call and its result).
func toolLoop(n int, tag string) []llm.Message {
	h := []llm.Message{llm.UserText("go " + tag)}
	for i := range n {
		call := &llm.ToolCall{ID: fmt.Sprintf("c%s%d", tag, i), Name: "read", Arguments: `{"path":"f"}`}
		h = append(h, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, Call: call}}, StopReason: llm.StopToolUse},
			llm.ToolResultText(call, tag+strings.Repeat("r", i), false))
	}
	return h
}

// deepClone copies msgs and their parts, so that editing the copy in place leaves msgs alone.
func deepClone(msgs []llm.Message) []llm.Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].Content = slices.Clone(out[i].Content)
	}
	return out
}

// TestLineageNeverServesStaleBytes sends one cache a sequence of requests that grow under a
// lineage (vouched: only the new messages are read), then change the history every way a
// caller can — an edit in place sent without a lineage, a compaction and a fork under new
// lineages, two agents' lineages interleaved, a history that needs healing, images — and
// compares every body, after all were encoded, with its encoding without cache.
func TestLineageNeverServesStaleBytes(t *testing.T) {
	cfg := &Config{Model: "m", Compat: Compat{MaxTokensField: FieldMaxTokens}}
	var schemas schemaCache
	var cache msgCache
	h := toolLoop(30, "a")
	edited := deepClone(h)
	failed := slices.Concat(h[:9], []llm.Message{{Role: llm.RoleAssistant, StopReason: llm.StopAborted, Content: []llm.Part{llm.Text("cut")}}}, h[9:])
	image := llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("png")}
	withImage := deepClone(h)
	withImage[4].Content = append(withImage[4].Content, image)
	la, lb, lc, ld, le, lf := llm.NewLineage(), llm.NewLineage(), llm.NewLineage(), llm.NewLineage(), llm.NewLineage(), llm.NewLineage()
	other := toolLoop(12, "b")
	steps := []struct {
		name    string
		lineage *llm.Lineage
		msgs    []llm.Message
		edit    func() // run before the request: an edit in place
		read    int    // messages read, -1: not checked
	}{
		{"first request of a lineage", la, h[:11], nil, 22},
		{"grown", la, h[:21], nil, 20},
		{"grown again", la, h[:41], nil, 40},
		{"no growth", la, h[:41], nil, 0},
		{"another lineage", lb, edited[:41], nil, 82},
		{"edited in place, sent without a lineage", nil, edited[:41], func() { edited[6].Content[0].Text = "EDITED" }, 82},
		{"the lineage after a request without one", lb, edited[:45], nil, 90},
		{"compacted: a new lineage", lc, slices.Concat([]llm.Message{llm.UserText("summary")}, h[31:]), nil, -1},
		{"forked shorter: a new lineage", ld, h[:7], nil, 14},
		{"agent one", la, h[:51], nil, -1},
		{"agent two", le, other[:9], nil, -1},
		{"agent one again", la, h[:55], nil, -1},
		{"agent two again", le, other[:25], nil, -1},
		{"a history that needs healing", lf, failed[:20], nil, -1},
		{"it grows, still healed", lf, failed[:40], nil, -1},
		{"images", lc, withImage[:11], nil, 22},
		{"images, grown", lc, withImage[:31], nil, 40},
		{"images, grown again", lc, withImage[:61], nil, 60},
	}
	type sent struct {
		name string
		segs [][]byte
		want string
	}
	var all []sent
	for _, s := range steps {
		if s.edit != nil {
			s.edit()
		}
		req := &llm.Request{System: "sys", Messages: s.msgs, Lineage: s.lineage}
		want, err := encodeBody(nil, cfg, req, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := cache.read
		w := &bodyWriter{}
		if err := writeBody(w, cfg, req, &schemas, &cache); err != nil {
			t.Fatal(err)
		}
		if got := cache.read - before; s.read >= 0 && got != s.read {
			t.Errorf("%s: %d messages read, want %d", s.name, got, s.read)
		}
		segs, _ := w.segments()
		all = append(all, sent{s.name, segs, string(want)})
	}
	for _, s := range all {
		var got []byte
		for _, seg := range s.segs {
			got = append(got, seg...)
		}
		if string(got) != s.want {
			t.Errorf("%s: the body differs from its encoding without cache:\n got %.400s\nwant %.400s", s.name, got, s.want)
		}
	}
	if !strings.Contains(all[5].want, "EDITED") {
		t.Fatal("the edit in place is not in the body of the request after it")
	}
}

// TestFalseVouchIsCaught checks the tests' own guard: a request whose lineage vouches for a
// message that was edited in place makes the verifying cache panic, so a caller that breaks
// the promise fails the tests that exercise it.
func TestFalseVouchIsCaught(t *testing.T) {
	cfg := &Config{Model: "m", Compat: Compat{MaxTokensField: FieldMaxTokens}}
	var cache msgCache
	h := deepClone(toolLoop(5, "a"))
	l := llm.NewLineage()
	if err := writeBody(&bodyWriter{}, cfg, &llm.Request{Messages: h, Lineage: l}, nil, &cache); err != nil {
		t.Fatal(err)
	}
	h[2].Content[0].Text = "edited in place"
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "message 2 changed") {
			t.Fatalf("a false vouch was not caught: %v", v)
		}
	}()
	_ = writeBody(&bodyWriter{}, cfg, &llm.Request{Messages: h, Lineage: l}, nil, &cache)
}

// TestConcurrentLineagesOnOneModel runs eight agents' growing histories, each under its own
// lineage, concurrently on one model (run it with -race): the server gets exactly the bodies
// their encodings without cache are.
func TestConcurrentLineagesOnOneModel(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[string(b)]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, chattest.Content("ok")+chattest.Finish("stop")+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	m, err := New(Config{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	var wg sync.WaitGroup
	for a := range 8 {
		h := toolLoop(40, fmt.Sprint(a))
		l := llm.NewLineage()
		var reqs []*llm.Request
		for n := 1; n <= len(h); n += 1 + 2*a {
			req := &llm.Request{System: "sys", Messages: h[:n], Lineage: l}
			body, perr := encodeBody(nil, &m.cfg, req, nil, nil)
			if perr != nil {
				t.Fatal(perr)
			}
			want[string(body)]++
			reqs = append(reqs, req)
		}
		wg.Go(func() {
			for _, req := range reqs {
				if msg := m.Stream(context.Background(), req, func(llm.Event) {}); msg.StopReason != llm.StopEnd {
					t.Errorf("agent %d: %s: %v", a, msg.StopReason, msg.Err)
				}
			}
		})
	}
	wg.Wait()
	for b, n := range got {
		if want[b] != n {
			t.Fatalf("the server got %d times a body encoded %d times: %.200s", n, want[b], b)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the server got %d distinct bodies, want %d", len(got), len(want))
	}
}
