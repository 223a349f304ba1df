package runbytes

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Request is one captured model request: the stage it was sent in and its body.
type Request struct {
	Stage string
	Body  []byte
	// Answer is what the mock streamed back (the session's final answer, for the last
	// request of a session).
	Answer chatMessage
}

// wireBody is what the measurement reads of a request body: each message and the tool
// array exactly as sent.
type wireBody struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

// Session is one stage session's figures. Bytes are as sent on the wire.
type Session struct {
	Stage    string `json:"stage"`
	Model    string `json:"model"`
	Requests int    `json:"requests"`
	// FirstBytes is the first request's body; of it FixedBytes the system message and the
	// tool array, PackBytes the first user message (the stage's rendered inputs), the rest
	// JSON framing and parameters.
	FirstBytes int `json:"firstBytes"`
	FixedBytes int `json:"fixedBytes"`
	PackBytes  int `json:"packBytes"`
	// TotalBytes is every request of the session.
	TotalBytes int `json:"totalBytes"`
	// TranscriptBytes is the session's final conversation (every message but the system
	// one, the final answer included), as a later request would carry it.
	TranscriptBytes int `json:"transcriptBytes"`
	// OneSessionBytes is what the session's requests would be if one session had carried
	// every earlier session's transcript in its history.
	OneSessionBytes int `json:"oneSessionBytes"`
}

// Figures are a whole run's.
type Figures struct {
	Sessions        []Session `json:"sessions"`
	Requests        int       `json:"requests"`
	TotalBytes      int       `json:"totalBytes"`
	OneSessionBytes int       `json:"oneSessionBytes"`
	// Ratio is TotalBytes / OneSessionBytes: what the run sends against one session
	// carrying the same history.
	Ratio float64 `json:"ratio"`
}

// Measure computes the figures of the requests of one run, in the order they were sent.
// A request whose conversation holds no assistant message starts a new session.
func Measure(reqs []Request) (*Figures, error) {
	f := &Figures{}
	history := 0 // bytes of all finished sessions' transcripts, with a comma each message
	var cur *Session
	var last wireBody
	var lastAnswer chatMessage
	finish := func() error {
		if cur == nil {
			return nil
		}
		t, err := transcript(last, lastAnswer)
		if err != nil {
			return err
		}
		cur.TranscriptBytes = t
		f.Sessions = append(f.Sessions, *cur)
		history += t
		return nil
	}
	for i, r := range reqs {
		var b wireBody
		if err := json.Unmarshal(r.Body, &b); err != nil {
			return nil, fmt.Errorf("runbytes: request %d: %w", i+1, err)
		}
		first, err := startsSession(b)
		if err != nil {
			return nil, fmt.Errorf("runbytes: request %d: %w", i+1, err)
		}
		if first || cur == nil || cur.Stage != r.Stage {
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &Session{Stage: r.Stage, Model: b.Model, FirstBytes: len(r.Body), FixedBytes: len(b.Tools)}
			for _, m := range b.Messages {
				switch role(m) {
				case "system", "developer":
					cur.FixedBytes += len(m)
				case "user":
					if cur.PackBytes == 0 {
						cur.PackBytes = len(m)
					}
				}
			}
		}
		cur.Requests++
		cur.TotalBytes += len(r.Body)
		one := len(r.Body)
		if history > 0 {
			one += history + 1 // the earlier transcripts, and the comma before this request's messages
		}
		cur.OneSessionBytes += one
		f.Requests++
		f.TotalBytes += len(r.Body)
		f.OneSessionBytes += one
		last, lastAnswer = b, r.Answer
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if f.OneSessionBytes > 0 {
		f.Ratio = float64(f.TotalBytes) / float64(f.OneSessionBytes)
	}
	return f, nil
}

func role(m json.RawMessage) string {
	var r struct {
		Role string `json:"role"`
	}
	json.Unmarshal(m, &r)
	return r.Role
}

// startsSession says whether a request is a session's first: no assistant message yet.
func startsSession(b wireBody) (bool, error) {
	if len(b.Messages) == 0 {
		return false, fmt.Errorf("no messages")
	}
	return !slices.ContainsFunc(b.Messages, func(m json.RawMessage) bool { return role(m) == "assistant" }), nil
}

// transcript is the bytes a later request would carry of a finished session: the last
// request's messages but the system one, and the final answer, each with a comma.
func transcript(last wireBody, answer chatMessage) (int, error) {
	n := 0
	for _, m := range last.Messages {
		if r := role(m); r != "system" && r != "developer" {
			n += len(m) + 1
		}
	}
	a, err := json.Marshal(answerJSON(answer))
	if err != nil {
		return 0, err
	}
	return n + len(a) + 1, nil
}

// answerJSON is an answer as Chat Completions history carries it.
func answerJSON(m chatMessage) map[string]any {
	out := map[string]any{"role": "assistant", "content": json.RawMessage(m.Content)}
	if len(m.Content) == 0 {
		out["content"] = ""
	}
	if len(m.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range m.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Function.Name, "arguments": c.Function.Arguments}})
		}
		out["tool_calls"] = calls
	}
	return out
}
