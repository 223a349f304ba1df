package redact_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/llmtest"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
	"github.com/reinhq/rein/internal/llm/redact"
	"github.com/reinhq/rein/internal/llm/watchdog"
)

// key is shaped like an OpenAI project key; built at run time so no scanner flags this file.
var key = "sk-" + "proj-" + "Qm7vR2xK9pLw4ZtB8nYc3HdF6sJa1UeG5oVi0TqNrXbWkM"

// TestKeyForms: the exact key and every masked echo of it are removed; the words around stay.
func TestKeyForms(t *testing.T) {
	r := redact.New(key)
	last4 := key[len(key)-4:]
	for name, text := range map[string]string{
		"exact":             "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys.",
		"openai project":    "Incorrect API key provided: sk-proj-" + strings.Repeat("*", 36) + last4 + ". You can find your API key at https://platform.openai.com/account/api-keys.",
		"openai legacy":     "Incorrect API key provided: " + key[:8] + strings.Repeat("*", 30) + last4 + ".",
		"dots":              "key sk-..." + last4 + " was revoked",
		"ellipsis":          "key " + key[:12] + "…" + last4 + " was revoked",
		"bullets":           "key " + key[:6] + "••••" + last4,
		"suffix only":       "key ****" + last4 + " is not valid",
		"prefix only":       "key " + key[:20] + "**** is not valid",
		"mixed mask":        "key " + key[:10] + "...****" + key[len(key)-6:],
		"quoted in JSON":    `{"error":{"message":"bad key \"` + key[:8] + `****` + last4 + `\""}}`,
		"twice":             "first ****" + last4 + ", then " + key,
		"inside a URL path": "GET /v1/keys/" + key + "/usage failed",
	} {
		got := r.Text(text)
		if strings.Contains(got, key) || strings.Contains(got, last4) || strings.Contains(got, key[8:14]) {
			t.Errorf("%s: the key survived: %q", name, got)
		}
		if !strings.Contains(got, "[REDACTED:api-key]") {
			t.Errorf("%s: no marker: %q", name, got)
		}
		if r.Text(got) != got {
			t.Errorf("%s: not idempotent: %q then %q", name, got, r.Text(got))
		}
	}
	got := r.Text("Incorrect API key provided: sk-proj-" + strings.Repeat("*", 36) + last4 + ". You can find your API key at https://platform.openai.com/account/api-keys.")
	if want := "Incorrect API key provided: [REDACTED:api-key]. You can find your API key at https://platform.openai.com/account/api-keys."; got != want {
		t.Errorf("masked echo:\n got %q\nwant %q", got, want)
	}
}

// TestHeaderValues: credential headers quoted in a text lose their values, whatever the key.
func TestHeaderValues(t *testing.T) {
	r := redact.New() // no key known: the header rule alone must do it
	other := "tok_" + "Zx81Lm2Qp0Rw7Vn4"
	for name, c := range map[string]struct{ text, keep string }{
		"bearer":       {"request had Authorization: Bearer " + other + " and failed", "Authorization: Bearer [REDACTED:auth-header] and failed"},
		"x-api-key":    {"x-api-key: " + other, "x-api-key: [REDACTED:auth-header]"},
		"json":         {`{"headers":{"Authorization":"Bearer ` + other + `"}}`, `"Authorization":"Bearer [REDACTED:auth-header]"`},
		"go map":       {"header map[Authorization:[Bearer " + other + "] Content-Type:[application/json]]", "map[Authorization:[Bearer [REDACTED:auth-header]] Content-Type:[application/json]]"},
		"azure":        {"api-key=" + other + "; retry", "api-key=[REDACTED:auth-header]; retry"},
		"google":       {"X-Goog-Api-Key: " + other, "X-Goog-Api-Key: [REDACTED:auth-header]"},
		"basic":        {"Proxy-Authorization: Basic " + other, "Proxy-Authorization: Basic [REDACTED:auth-header]"},
		"prose stays":  {"invalid x-api-key", "invalid x-api-key"},
		"missing word": {"the Authorization header is missing", "the Authorization header is missing"},
	} {
		got := r.Text(c.text)
		if !strings.Contains(got, c.keep) || (c.text != c.keep && strings.Contains(got, other)) {
			t.Errorf("%s: %q\nwant it to contain %q", name, got, c.keep)
		}
	}
}

// TestAdapterMarker: text an adapter has already scrubbed ("[redacted]" in place of the key)
// gets the one marker and is not garbled by the header rule.
func TestAdapterMarker(t *testing.T) {
	r := redact.New(key)
	for text, want := range map[string]string{
		"sent with Authorization: Bearer [redacted] (key [redacted])": "sent with Authorization: Bearer [REDACTED:api-key] (key [REDACTED:api-key])",
		"sent with x-api-key: [redacted]":                             "sent with x-api-key: [REDACTED:api-key]",
		"Authorization: Bearer":                                       "Authorization: Bearer",
	} {
		if got := r.Text(text); got != want {
			t.Errorf("%q:\n got %q\nwant %q", text, got, want)
		}
	}
}

// TestScannerFindings: what the secret scanner finds goes too, also with no key given.
func TestScannerFindings(t *testing.T) {
	gh := "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYZq9R"
	got := redact.New().Text("upstream said: token " + gh + " is not allowed")
	if strings.Contains(got, gh) || !strings.Contains(got, "[REDACTED:github-token]") {
		t.Errorf("github token: %q", got)
	}
}

// TestShortKeys: a key under 8 bytes is removed where it stands on its own, never matched
// inside words or by fragments.
func TestShortKeys(t *testing.T) {
	r := redact.New("k", "abc123")
	for text, want := range map[string]string{
		"invalid api key k":                     "invalid api key [REDACTED:api-key]",
		"key=k&x=1":                             "key=[REDACTED:api-key]&x=1",
		"the key is not valid: kkk":             "the key is not valid: kkk",
		"Incorrect key abc123.":                 "Incorrect key [REDACTED:api-key].",
		"Incorrect key xabc123":                 "Incorrect key xabc123",
		"masked abc1****c123 is not a fragment": "masked abc1****c123 is not a fragment",
		"ok... 123 tokens":                      "ok... 123 tokens",
	} {
		if got := r.Text(text); got != want {
			t.Errorf("%q:\n got %q\nwant %q", text, got, want)
		}
	}
}

// TestNoFalsePositives: text that merely has masks, dots or common words is left alone.
func TestNoFalsePositives(t *testing.T) {
	r := redact.New(key)
	for _, text := range []string{
		"Rate limit reached... please retry in 20s",
		"You exceeded your current quota, please check your plan and billing details.",
		"model **gpt-5** not found",
		"prompt is too long: 250000 tokens > 200000 maximum",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	} {
		if got := r.Text(text); got != text {
			t.Errorf("changed:\n got %q\nwant %q", got, text)
		}
	}
}

// TestCaps: a long text is cut to MaxText bytes, marker included, on a character boundary,
// and the key is removed before the cut so no piece of it survives at the edge.
func TestCaps(t *testing.T) {
	r := redact.New(key)
	long := strings.Repeat("é", 2000) + key
	got := r.Text(long)
	if len(got) > redact.MaxText || !utf8.ValidString(got) || !strings.Contains(got, "bytes not kept]") {
		t.Fatalf("cap: %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got[len(got)-60:])
	}
	edge := strings.Repeat("a", redact.MaxText-40) + " " + key + " tail"
	if got := r.Text(edge); strings.Contains(got, key[:8]) {
		t.Errorf("a piece of the key survived the cut: %q", got[len(got)-80:])
	}
	if got := r.Text(got); r.Text(got) != got {
		t.Errorf("capping is not idempotent")
	}
	if short := "short text"; r.Text(short) != short {
		t.Errorf("short text changed")
	}
}

// TestHTML: an HTML error page is reduced to its title (or first heading) and size.
func TestHTML(t *testing.T) {
	r := redact.New(key)
	page := "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Oops</h1>" +
		strings.Repeat("<p>stack frame at upstream.go:42</p>\n", 50) + "<p>Authorization: Bearer " + key + "</p></body></html>"
	got := r.Text(page)
	if !strings.HasPrefix(got, "an HTML page of ") || !strings.HasSuffix(got, ` bytes titled "500 Internal Server Error"`) || len(got) > 80 {
		t.Errorf("page: %q", got)
	}
	heading := "upstream failed: <html><body><h1>502 Bad &amp; Gateway</h1>" + strings.Repeat("x", 3000) + "</body></html>"
	if got := r.Text(heading); !strings.HasPrefix(got, "upstream failed: an HTML page of") || !strings.HasSuffix(got, `titled "502 Bad & Gateway"`) {
		t.Errorf("heading: %q", got)
	}
	bare := "<html><body>" + strings.Repeat("y", 3000) + "</body></html>"
	if got := r.Text(bare); got != fmt.Sprintf("an HTML page of %d bytes", len(bare)) {
		t.Errorf("no title: %q", got)
	}
	tricky := "<html><title>&lt;title&gt; " + key[:8] + "****" + key[len(key)-4:] + "</title></html>"
	if got := r.Text(tricky); strings.Contains(got, key[len(key)-4:]) || r.Text(got) != got {
		t.Errorf("title with a masked key: %q", got)
	}
}

// TestErrorsDecorator: the wrapped model reports scrubbed errors in its returned message and
// in every event, hands on the same message in the final event as it returns, leaves
// successful answers and the adapter's own values alone.
func TestErrorsDecorator(t *testing.T) {
	orig := &llm.Error{Kind: llm.KindAuth, Status: 401, Message: "Incorrect API key provided: " + key}
	inner := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		emit(llm.Event{Type: llm.EventStart})
		emit(llm.Event{Type: llm.EventRetry, Err: orig})
		m := llm.Fail(&llm.Message{Content: []llm.Part{llm.Text("partial")}}, orig)
		emit(llm.Event{Type: llm.EventError, Message: m})
		return m
	})
	var events []llm.Event
	msg := redact.Errors(inner, key).Stream(context.Background(), &llm.Request{}, func(ev llm.Event) { events = append(events, ev) })
	if strings.Contains(msg.Err.Message, key) || msg.Err.Status != 401 || msg.Err.Kind != llm.KindAuth || msg.Text() != "partial" {
		t.Errorf("returned message: %+v %+v", msg, msg.Err)
	}
	if events[len(events)-1].Message != msg {
		t.Errorf("the final event does not carry the returned message")
	}
	if strings.Contains(events[1].Err.Message, key) {
		t.Errorf("retry event: %q", events[1].Err.Message)
	}
	if !strings.Contains(orig.Message, key) {
		t.Errorf("the adapter's error was mutated")
	}
	ok := llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
		m := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("the key is " + key)}, StopReason: llm.StopEnd}
		emit(llm.Event{Type: llm.EventDone, Message: m})
		return m
	})
	var done *llm.Message
	got := redact.Errors(ok, key).Stream(context.Background(), &llm.Request{}, func(ev llm.Event) { done = ev.Message })
	if got != done || got.Text() != "the key is "+key {
		t.Errorf("a successful answer was changed: %q", got.Text())
	}
}

// TestConformance: a wrapped adapter still passes the conformance suite.
func TestConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Harness{
		New: func(baseURL, apiKey string, l watchdog.Limits) llm.Model {
			m, err := openaicompat.New(openaicompat.Config{Model: "qwen2.5-coder", BaseURL: baseURL, APIKey: apiKey, Timeouts: l})
			if err != nil {
				t.Fatal(err)
			}
			return redact.Errors(m, apiKey)
		},
		Fixture: chattest.Fixture(true),
	})
}

// TestAdapterEcho: over a real server that echoes the key masked and quotes the header,
// the wrapped adapter's error holds neither, and a 2 KB HTML page is reduced to its title.
func TestAdapterEcho(t *testing.T) {
	last4 := key[len(key)-4:]
	page := "<html><head><title>Bad Gateway</title></head><body>" + strings.Repeat("<p>trace</p>", 170) + "</body></html>"
	bodies := map[int]string{
		401: `{"error":{"message":"Incorrect API key provided: sk-proj-*******` + last4 + `.","type":"invalid_request_error","code":"invalid_api_key"}}`,
		400: `{"error":{"message":"bad request from Authorization: Bearer ` + key + `","type":"invalid_request_error"}}`,
		502: page,
	}
	for status, body := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		m, err := openaicompat.New(openaicompat.Config{Model: "m", BaseURL: srv.URL, APIKey: key})
		if err != nil {
			t.Fatal(err)
		}
		msg := redact.Errors(m, key).Stream(context.Background(), llmtest.Request(), func(llm.Event) {})
		srv.Close()
		if msg.Err == nil || msg.Err.Status != status {
			t.Fatalf("%d: %+v", status, msg.Err)
		}
		if e := msg.Err.Message; strings.Contains(e, last4) || strings.Contains(e, key[8:16]) || len(e) > redact.MaxText {
			t.Errorf("%d: %q", status, e)
		}
		if status == 502 && !strings.Contains(msg.Err.Message, `titled "Bad Gateway"`) {
			t.Errorf("502: %q", msg.Err.Message)
		}
	}
}
