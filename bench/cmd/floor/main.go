// Command floor is the physical floor of a harness on the mock: the least a client can do per
// turn and still be an agent. It streams each request (the whole history, every message encoded
// once and kept), reads the tool calls from the stream, runs the read tool (the only one it
// has), appends K lines of ~300 bytes to a file and fsyncs each (the durable records a
// harness writes per turn), and sends the next request. Run it under `benchtool run` like a
// harness, so that its gaps are measured the same way:
//
//	benchtool run --script S --addr A --log L --dir WS --out R -- floor --base http://A/v1 --k 4
//
// With --durable-start it first does what a durable harness does before its first model
// request (a new session's directories, one fsynced record): the floor of process start →
// first request. It is a program of its own, linking only what it uses (net/http,
// encoding/json), so that its start is the floor of a Go client's too: as a subcommand of
// benchtool (10 MB, report and SVG code, YAML) its process start → main took 5.1 ms, a
// program with only net/http 2.9 (bench/NOTES.md).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := floorCmd(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func floorCmd(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	base := fs.String("base", "", "the mock's API root (…/v1)")
	k := fs.Int("k", 4, "fsynced appends per turn")
	journal := fs.String("journal", ".floor-journal", "the file the appends go to (in the working directory)")
	durable := fs.Bool("durable-start", false, "before the first request, create the journal three new directories deep "+
		"(as rein creates a session: sessions/<project>/<id>), append one record and fsync it, the new directories and their parent")
	prompt := fs.String("p", "Work through the task step by step.", "the user message")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *base == "" {
		return errors.New("floor: --base is required")
	}
	record := bytes.Repeat([]byte("x"), 299)
	record = append(record, '\n')
	f, err := openJournal(*journal, *durable, record)
	if err != nil {
		return err
	}
	defer f.Close()
	c := &floorClient{url: strings.TrimSuffix(*base, "/") + "/chat/completions"}
	c.add(map[string]any{"role": "system", "content": "You are a coding agent."})
	c.add(map[string]any{"role": "user", "content": *prompt})
	for {
		text, calls, err := c.turn()
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			fmt.Println(text)
			return nil
		}
		c.add(map[string]any{"role": "assistant", "tool_calls": callsJSON(calls)})
		for _, call := range calls {
			var a struct{ Path string }
			out := ""
			if err := json.Unmarshal([]byte(call.args), &a); err != nil {
				out = "bad arguments: " + err.Error()
			} else if data, err := os.ReadFile(filepath.Clean(a.Path)); err != nil {
				out = err.Error()
			} else {
				out = string(data)
			}
			c.add(map[string]any{"role": "tool", "tool_call_id": call.id, "content": out})
		}
		for range *k {
			if _, err := f.Write(record); err != nil {
				return err
			}
			if err := f.Sync(); err != nil {
				return err
			}
		}
	}
}

// openJournal opens the floor's journal. With durable it is what a durable harness does before
// its first model request: it makes the journal's directories (three new levels under the
// journal's name), creates the file, appends record, and fsyncs the file and then each new
// directory and their parent, innermost first.
func openJournal(journal string, durable bool, record []byte) (*os.File, error) {
	if !durable {
		return os.OpenFile(journal, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	top := journal + ".d"
	dirs := []string{filepath.Join(top, "project", "session"), filepath.Join(top, "project"), top, filepath.Dir(top)}
	if err := os.MkdirAll(dirs[0], 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dirs[0], "journal"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(record); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func syncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	serr := d.Sync()
	if cerr := d.Close(); serr == nil {
		serr = cerr
	}
	return serr
}

type floorCall struct{ id, name, args string }

func callsJSON(calls []floorCall) []any {
	out := make([]any, len(calls))
	for i, c := range calls {
		out[i] = map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}
	}
	return out
}

// floorClient keeps the encoded messages and one body buffer.
type floorClient struct {
	url  string
	msgs [][]byte
	body []byte
}

func (c *floorClient) add(m map[string]any) {
	b, _ := json.Marshal(m)
	c.msgs = append(c.msgs, b)
}

const floorTools = `[{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`

// turn sends the history and returns the answer's text and tool calls.
func (c *floorClient) turn() (string, []floorCall, error) {
	b := append(c.body[:0], `{"stream":true,"model":"mock","stream_options":{"include_usage":true},"tools":`...)
	b = append(b, floorTools...)
	b = append(b, `,"messages":[`...)
	for i, m := range c.msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	b = append(b, "]}"...)
	c.body = b
	res, err := http.Post(c.url, "application/json", bytes.NewReader(b))
	if err != nil {
		return "", nil, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, res.Body) // to its end, so that the connection is reused
		res.Body.Close()
	}()
	if res.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("floor: HTTP %s", res.Status)
	}
	var text strings.Builder
	var calls []floorCall
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string
					ToolCalls []struct {
						Index    int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return "", nil, fmt.Errorf("floor: %w", err)
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, floorCall{})
				}
				fc := &calls[tc.Index]
				fc.id += tc.ID
				fc.name += tc.Function.Name
				fc.args += tc.Function.Arguments
			}
		}
	}
	return text.String(), calls, sc.Err()
}
