package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// event is one server-sent event of an answer stream.
type event struct {
	name, id string
	data     []byte
}

// eventReader reads the text/event-stream format: lines ending in "\n" or "\r\n";
// "data:" lines joined by "\n", "event:" and "id:" kept, comments and other fields ignored,
// a blank line ends an event. An event longer than maxMessage is an error.
type eventReader struct {
	r *bufio.Reader
}

func newEventReader(r io.Reader) *eventReader { return &eventReader{r: bufio.NewReaderSize(r, 16<<10)} }

// next returns the next event with data or an id; io.EOF at the end of the stream (an event
// the stream ends inside of is dropped: its message may be incomplete).
func (e *eventReader) next() (event, error) {
	var ev event
	var data bytes.Buffer
	fields := false
	size := 0
	for {
		line, err := e.line(&size)
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 {
			if fields {
				ev.data = data.Bytes()
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
			fields = true
		case "event":
			ev.name, fields = string(value), true
		case "id":
			if !bytes.ContainsRune(value, 0) {
				ev.id, fields = string(value), true
			}
		}
	}
}

// line reads one line without its end; size counts the bytes of the event so far.
func (e *eventReader) line(size *int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := e.r.ReadSlice('\n')
		*size += len(chunk)
		if *size > maxMessage {
			return nil, fmt.Errorf("%w: an event longer than %d MiB", errMalformed, maxMessage>>20)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err // io.EOF: a last line without its end belongs to a cut event
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		return line, nil
	}
}
