package mock

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// TTFT is the time to first token: how long the server waits after reading a request
	// before it sends the first byte of the response.
	TTFT time.Duration
	// TokenDelay is the wait between two streamed tokens (text tokens and argument chunks).
	TokenDelay time.Duration
	// Log receives one JSON [Entry] per request; nil logs nothing.
	Log io.Writer
	// Model is the model id the responses name; empty means "mock".
	Model string
	// Answer, when set, chooses the answer to each request instead of the script: it gets the
	// request's API ("openai", "responses" or "anthropic") and body and returns the turn to
	// stream (a nil script is then allowed). An error answers 400 with it.
	Answer func(api string, body []byte) (*Turn, error)
	// Body, when set, sees every request's body (its number, 1-based, and the bytes; the
	// slice is not reused) before it is answered.
	Body func(n int, body []byte)
}

// Entry is the log line of one request. Times are Unix nanoseconds: RecvNS when the request's
// headers arrived (the handler started), BodyNS when its body was read, DoneNS when the last
// byte of the response was written and flushed. Lines are written after the response, so a
// client that sends its next request at once may see it logged first: order by N.
type Entry struct {
	N           int    `json:"n"`
	API         string `json:"api"`
	Path        string `json:"path"`
	RecvNS      int64  `json:"recv_ns"`
	BodyNS      int64  `json:"body_ns"`
	DoneNS      int64  `json:"done_ns"`
	Bytes       int    `json:"bytes"`
	Messages    int    `json:"messages"`
	Tools       int    `json:"tools"`
	SystemBytes int    `json:"system_bytes"`
	Stream      bool   `json:"stream"`
	// Turn is the script turn answered (1-based); 0 when the script was exhausted.
	Turn int `json:"turn"`
	// ExpectOK says whether the request held the previous turn's expect string; absent when
	// that turn had none.
	ExpectOK *bool  `json:"expect_ok,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Server is an http.Handler playing a Script.
type Server struct {
	opts   Options
	script *Script

	mu   sync.Mutex
	next int // index of the next turn
	n    int // requests seen

	logMu sync.Mutex
}

// New returns a server playing s from its first turn.
func New(s *Script, o Options) *Server {
	if o.Model == "" {
		o.Model = "mock"
	}
	return &Server{opts: o, script: s}
}

// Requests returns the number of model requests served so far.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// wireRequest is what the server reads of either API's request body.
type wireRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Input        []json.RawMessage `json:"input"`        // Responses only
	Instructions json.RawMessage   `json:"instructions"` // Responses only
	Tools        []json.RawMessage `json:"tools"`
	System       json.RawMessage   `json:"system"` // Anthropic only
	Stream       bool              `json:"stream"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	recv := time.Now().UnixNano()
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"`+s.opts.Model+`","object":"model","owned_by":"mock"}]}`)
		return
	case r.Method != http.MethodPost:
		http.Error(w, "mock: only POST …/chat/completions, …/responses and …/messages", http.StatusNotFound)
		return
	}
	api := ""
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		api = "openai"
	case strings.HasSuffix(r.URL.Path, "/responses"):
		api = "responses"
	case strings.HasSuffix(r.URL.Path, "/messages"):
		api = "anthropic"
	default:
		http.Error(w, "mock: unknown path "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	e := Entry{API: api, Path: r.URL.Path, RecvNS: recv, BodyNS: time.Now().UnixNano(), Bytes: len(body)}
	var req wireRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	s.mu.Lock()
	s.n++
	e.N = s.n
	var turn *Turn
	if s.next > 0 {
		if x := s.script.Turns[s.next-1].Expect; x != "" {
			ok := bytes.Contains(body, []byte(x))
			e.ExpectOK = &ok
		}
	}
	if s.opts.Body != nil && err == nil {
		s.opts.Body(e.N, body)
	}
	if err == nil && s.opts.Answer != nil {
		turn, err = s.opts.Answer(api, body)
	} else if err == nil && s.next < len(s.script.Turns) {
		turn = &s.script.Turns[s.next]
		s.next++
		e.Turn = s.next
	}
	s.mu.Unlock()
	if err != nil {
		e.Error = err.Error()
		http.Error(w, `{"error":{"message":"mock: bad request: `+jsonEscape(err.Error())+`","type":"invalid_request_error"}}`, http.StatusBadRequest)
		e.DoneNS = time.Now().UnixNano()
		s.log(&e)
		return
	}
	if turn == nil {
		turn = &Turn{Text: "script exhausted"}
	}
	e.Messages, e.Tools, e.Stream = len(req.Messages)+len(req.Input), len(req.Tools), req.Stream
	e.SystemBytes = systemBytes(api, &req)
	if s.opts.TTFT > 0 {
		time.Sleep(s.opts.TTFT)
	}
	rw := &responder{w: w, delay: s.opts.TokenDelay, model: s.opts.Model, id: e.N, promptTokens: len(body)/4 + 1}
	if f, ok := w.(http.Flusher); ok {
		rw.flusher = f
	}
	switch {
	case api == "openai" && req.Stream:
		rw.openAIStream(turn)
	case api == "openai":
		rw.openAIWhole(turn)
	case api == "responses":
		rw.responsesStream(turn) // streamed whether or not asked: Codex always streams
	case req.Stream:
		rw.anthropicStream(turn)
	default:
		rw.anthropicWhole(turn)
	}
	rw.flush()
	e.DoneNS = time.Now().UnixNano()
	s.log(&e)
}

func (s *Server) log(e *Entry) {
	if s.opts.Log == nil {
		return
	}
	line, _ := json.Marshal(e)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.opts.Log.Write(append(line, '\n'))
}

// systemBytes counts the bytes of the system prompt's text: OpenAI's system and developer
// messages (and the Responses API's instructions), Anthropic's system field.
func systemBytes(api string, req *wireRequest) int {
	if api == "anthropic" {
		return textBytes(req.System)
	}
	n := textBytes(req.Instructions)
	for _, raw := range req.Input {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) == nil && (m.Role == "system" || m.Role == "developer") {
			n += textBytes(m.Content)
		}
	}
	for _, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			n += textBytes(m.Content)
		}
	}
	return n
}

// textBytes is the length of a JSON string, or the summed text of an array of text parts.
func textBytes(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return len(s)
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		n := 0
		for _, p := range parts {
			n += len(p.Text)
		}
		return n
	}
	return 0
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// tokens splits text into streamed pieces: a word with the spaces after it.
func tokens(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// chunks splits a tool call's arguments into a few pieces, as models stream them.
func chunks(args string) []string {
	const size = 24
	var out []string
	for len(args) > size {
		out = append(out, args[:size])
		args = args[size:]
	}
	return append(out, args)
}
