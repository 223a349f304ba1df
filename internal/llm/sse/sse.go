package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

// MaxLine bounds one line of an event stream, and the data of one event (its data lines joined):
// a Responses API terminal event carries the whole response, encrypted reasoning included.
const MaxLine = 32 << 20

// Event is one server-sent event: its name (the "event:" field, often empty) and its data
// lines joined by "\n".
type Event struct {
	Name string
	Data []byte
}

// Decoder reads server-sent events (the text/event-stream format) from a response body.
//
// Lines end with "\n" or "\r\n" (a lone "\r" is not a line end: neither OpenAI nor any
// compatible server sends one); a last line without an end is still read. A line starting
// with ":" is a comment (keep-alives); "data:" lines accumulate, one space after the colon
// removed; "event:" names the event; "id:" sets the event id, which becomes the last event id
// ([Decoder.LastID], kept from event to event) when a blank line ends the event, also one
// without data (an id holding a NUL is ignored); other fields are ignored. A blank line dispatches the
// event when it has data. An event the body ends inside of (fields read, no blank line
// after them) is not dispatched: [Decoder.Cut] reports it. A line longer than [MaxLine], or an
// event whose data grows past it, is an error wrapping [bufio.ErrTooLong]: nothing past the
// limit is buffered.
//
// The Event's Data is valid until the next call to Next.
type Decoder struct {
	r       *bufio.Reader
	long    []byte // a line longer than the reader's buffer
	data    []byte
	name    string
	ev      Event
	id      string // the "id:" field of the event being read
	lastID  string
	pending bool // a field line was read since the last blank line
	started bool
	cut     bool
	err     error
}

// readBuffer is the size of a Decoder's read buffer; longer lines are assembled in Decoder.long.
const readBuffer = 16 << 10

// maxKept bounds the buffers a released Decoder keeps for the next stream.
const maxKept = 1 << 20

// decoders holds released decoders: a stream per model request, and the read buffer was the
// largest allocation of one.
var decoders = sync.Pool{New: func() any { return &Decoder{r: bufio.NewReaderSize(nil, readBuffer)} }}

// NewDecoder returns a decoder reading r, a released one when there is one. Call Release when
// done with it.
func NewDecoder(r io.Reader) *Decoder {
	d := decoders.Get().(*Decoder)
	d.r.Reset(r)
	return d
}

// Release hands d back for a later stream; neither d nor an Event it returned may be used
// afterwards.
func (d *Decoder) Release() {
	d.r.Reset(nil)
	if cap(d.data) > maxKept || cap(d.long) > maxKept {
		return // an unusually large stream: let its buffers go
	}
	*d = Decoder{r: d.r, data: d.data[:0], long: d.long[:0]}
	decoders.Put(d)
}

// Next reads the next event; false at the end of the body or on an error ([Decoder.Err]).
func (d *Decoder) Next() bool {
	if d.err != nil || d.cut {
		return false
	}
	d.data, d.name = d.data[:0], ""
	for {
		line, err := d.line()
		if err != nil && len(line) == 0 {
			if err == io.EOF {
				d.cut = d.pending
				if d.cut {
					d.ev = Event{Name: d.name, Data: d.data}
				}
				return false
			}
			d.err = err
			return false
		}
		if len(line) == 0 {
			d.pending, d.lastID = false, d.id
			if len(d.data) == 0 {
				d.name = ""
				continue
			}
			d.ev = Event{Name: d.name, Data: d.data}
			return true
		}
		if ferr := d.field(line); ferr != nil {
			d.err = ferr
			return false
		}
		if err == io.EOF {
			d.cut = d.pending // a last line without its end: the event is not complete
			d.ev = Event{Name: d.name, Data: d.data}
			return false
		}
	}
}

// field applies one non-blank line; an event's data past [MaxLine] is an error.
func (d *Decoder) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment
	}
	d.pending = true
	name, value, _ := bytes.Cut(line, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
		if len(d.data) > 0 && len(d.data)+1+len(value) > MaxLine {
			return fmt.Errorf("an event stream event's data is longer than %d MiB: %w", MaxLine>>20, bufio.ErrTooLong)
		}
		if len(d.data) > 0 {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
	case "event":
		d.name = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.id = string(value)
		}
	}
	return nil
}

// LastID is the id of the last event a blank line ended, with data or not; "" before any. An
// event the body ends inside of does not set it.
func (d *Decoder) LastID() string { return d.lastID }

// line returns the next line without its end. At the end of the body it returns the
// unterminated rest (if any) with io.EOF.
func (d *Decoder) line() ([]byte, error) {
	d.long = d.long[:0]
	for {
		b, err := d.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(d.long)+len(b) > MaxLine {
				return nil, fmt.Errorf("an event stream line is longer than %d MiB: %w", MaxLine>>20, bufio.ErrTooLong)
			}
			d.long = append(d.long, b...)
			continue
		}
		if len(d.long) > 0 {
			d.long = append(d.long, b...)
			b = d.long
		}
		if len(b) > MaxLine {
			return nil, fmt.Errorf("an event stream line is longer than %d MiB: %w", MaxLine>>20, bufio.ErrTooLong)
		}
		if !d.started {
			d.started = true
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a byte order mark
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		return b, err
	}
}

// Event returns the event Next read.
func (d *Decoder) Event() Event { return d.ev }

// Err returns the read error that stopped Next; nil at the end of the body.
func (d *Decoder) Err() error { return d.err }

// Cut reports whether the body ended inside an event, and returns that event's fields as far
// as they came.
func (d *Decoder) Cut() (Event, bool) {
	if !d.cut {
		return Event{}, false
	}
	return d.ev, true
}
