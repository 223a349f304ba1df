// Package mock is a scripted LLM server for benchmarks. It speaks OpenAI's Chat Completions
// streaming wire (POST …/chat/completions), OpenAI's Responses streaming wire
// (POST …/responses: what Codex speaks) and Anthropic's Messages streaming wire
// (POST …/messages), and answers every request with the next turn of a script, whatever the
// request says (or, with [Options.Answer], with what a function of the request chooses). It can add a time to first token and a delay per token, and it logs every
// request (arrival, end of response, bytes, messages, tools, system prompt bytes) as one JSON
// line, which is what the benchmark scripts measure harnesses with.
package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Script is the list of turns a server plays, in order, one per request.
//
// A script file is JSON:
//
//	{"turns": [
//	  {"calls": [{"name": "write", "args": {"path": "notes.txt", "content": "one\n"}}]},
//	  {"calls": [{"name": "read", "args": {"path": "data.txt"}}], "repeat": 50, "expect": "MARKER-{{i}}"},
//	  {"text": "done"}
//	]}
//
// A turn answers with its text (streamed token by token), then its tool calls. "repeat" plays
// the turn that many times; "{{i}}" in its text, arguments and expect is replaced by the
// repetition's number (1-based), "{{n}}" by the turn's number in the whole script (1-based).
// "expect" is a string the next request must contain (a tool result that proves the tool ran);
// the log says whether it did. Requests beyond the script get the answer "script exhausted".
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one scripted response.
type Turn struct {
	Text   string `json:"text,omitempty"`
	Calls  []Call `json:"calls,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
	Expect string `json:"expect,omitempty"`
}

// Call is one tool call of a turn. Args is a JSON object.
type Call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ParseScript parses and expands a script: repeated turns are unrolled and their placeholders
// filled.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mock: script: %w", err)
	}
	out := &Script{}
	for k, t := range s.Turns {
		if t.Text == "" && len(t.Calls) == 0 {
			return nil, fmt.Errorf("mock: script: turn %d has neither text nor calls", k+1)
		}
		for j, c := range t.Calls {
			if c.Name == "" {
				return nil, fmt.Errorf("mock: script: turn %d call %d has no name", k+1, j+1)
			}
			if len(c.Args) == 0 {
				t.Calls[j].Args = json.RawMessage("{}")
			}
			var obj map[string]any
			if err := json.Unmarshal(t.Calls[j].Args, &obj); err != nil {
				return nil, fmt.Errorf("mock: script: turn %d call %d: args must be a JSON object: %w", k+1, j+1, err)
			}
		}
		n := max(t.Repeat, 1)
		for i := 1; i <= n; i++ {
			out.Turns = append(out.Turns, fill(t, i, len(out.Turns)+1))
		}
	}
	if len(out.Turns) == 0 {
		return nil, errors.New("mock: script: no turns")
	}
	return out, nil
}

// LoadScript reads and parses a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScript(data)
}

func fill(t Turn, i, n int) Turn {
	r := strings.NewReplacer("{{i}}", strconv.Itoa(i), "{{n}}", strconv.Itoa(n))
	out := Turn{Text: r.Replace(t.Text), Expect: r.Replace(t.Expect)}
	for _, c := range t.Calls {
		// Placeholders are plain digits, so replacing inside the JSON keeps it valid.
		out.Calls = append(out.Calls, Call{Name: c.Name, Args: json.RawMessage(r.Replace(string(c.Args)))})
	}
	return out
}
