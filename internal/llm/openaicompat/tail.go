package openaicompat

import (
	"bytes"
	"io"
	"net/http"
)

// sseTail watches the server-sent-event framing of a chat stream's body as it is read, to tell
// how the stream ended: the SDK reports the "[DONE]" terminator and a clean end of the body
// alike, and drops an event the body ended in the middle of.
type sseTail struct {
	io.ReadCloser
	line    []byte // the first bytes of the line being read (enough to recognise [DONE])
	lineLen int
	pending bool // a field line was read since the last blank line: an event not yet dispatched
	done    bool // a "data: [DONE]" line was read
}

// maxTailLine is how much of a line sseTail keeps: "data: [DONE]" and some slack.
const maxTailLine = 16

func (t *sseTail) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	for _, b := range p[:n] {
		switch b {
		case '\n':
			t.endLine()
		case '\r':
		default:
			if t.lineLen < maxTailLine {
				t.line = append(t.line, b)
			}
			t.lineLen++
		}
	}
	if err == io.EOF && t.lineLen > 0 {
		t.endLine() // an unterminated last line
	}
	return n, err
}

func (t *sseTail) endLine() {
	line := t.line
	empty := t.lineLen == 0
	t.line, t.lineLen = t.line[:0], 0
	switch {
	case empty:
		t.pending = false // the blank line dispatches the event
	case line[0] == ':': // a comment
	default:
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok && bytes.HasPrefix(bytes.TrimLeft(v, " "), []byte("[DONE]")) {
			t.done = true
		}
		t.pending = true
	}
}

// cutMidEvent reports whether the body ended inside an event (other than the terminator).
func (t *sseTail) cutMidEvent() bool { return t.pending && !t.done }

// middleware wraps the response body of a successful request in t.
func (t *sseTail) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.Body != nil {
		t.ReadCloser = res.Body
		res.Body = t
	}
	return res, err
}
