package sse

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAll reads every event of body, the reader giving one byte per Read when split is set.
func decodeAll(t *testing.T, body string, split bool) (events []Event, cut *Event, err error) {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	if split {
		r = iotest.OneByteReader(r)
	}
	d := NewDecoder(r) // from the pool after the first case: Release must reset it
	defer d.Release()
	for d.Next() {
		ev := d.Event()
		events = append(events, Event{Name: ev.Name, Data: append([]byte(nil), ev.Data...)})
	}
	if ev, ok := d.Cut(); ok {
		cut = &Event{Name: ev.Name, Data: append([]byte(nil), ev.Data...)}
	}
	return events, cut, d.Err()
}

func TestDecoder(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // name|data of each event
		cut        string   // the cut event's data, "" for none
	}{
		{"plain", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`|{"a":1}`, "|[DONE]"}, ""},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"|a", "|b"}, ""},
		{"comments and keep-alives", ": keep-alive\n\n:\ndata: a\n: inside\n\n", []string{"|a"}, ""},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []string{"|{\"a\":\n1}"}, ""},
		{"no space after the colon", "data:x\n\n", []string{"|x"}, ""},
		{"event names", "event: response.created\ndata: {}\n\nevent: ping\n\ndata: z\n\n", []string{"response.created|{}", "|z"}, ""},
		{"ignored fields", "id: 7\nretry: 100\nfoo\ndata: a\n\n", []string{"|a"}, ""},
		{"byte order mark", "\xef\xbb\xbfdata: a\n\n", []string{"|a"}, ""},
		{"data at EOF without newline", "data: a\n\ndata: {\"b\":", []string{"|a"}, `{"b":`},
		{"event at EOF without blank line", "data: a\n", nil, "a"},
		{"comment at EOF", "data: a\n\n: bye", []string{"|a"}, ""},
		{"empty", "", nil, ""},
	} {
		for _, split := range []bool{false, true} {
			events, cut, err := decodeAll(t, tc.body, split)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var got []string
			for _, ev := range events {
				got = append(got, ev.Name+"|"+string(ev.Data))
			}
			if strings.Join(got, "\n--\n") != strings.Join(tc.want, "\n--\n") {
				t.Errorf("%s (split %v): events %q, want %q", tc.name, split, got, tc.want)
			}
			if (cut == nil) != (tc.cut == "") || (cut != nil && string(cut.Data) != tc.cut) {
				t.Errorf("%s (split %v): cut %v, want %q", tc.name, split, cut, tc.cut)
			}
		}
	}
}

func TestDecoderLongLines(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // longer than the reader's buffer, within MaxLine
	events, _, err := decodeAll(t, "data: "+big+"\n\n", false)
	if err != nil || len(events) != 1 || string(events[0].Data) != big {
		t.Fatalf("a 1 MiB line: %d events, err %v", len(events), err)
	}
	_, _, err = decodeAll(t, "data: "+strings.Repeat("x", MaxLine+1)+"\n\n", false)
	if !errors.Is(err, bufio.ErrTooLong) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("an oversize line: err %v, want bufio.ErrTooLong", err)
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("connection reset by peer")
	d := NewDecoder(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	if !d.Next() || string(d.Event().Data) != "a" {
		t.Fatal("first event missing")
	}
	if d.Next() || !errors.Is(d.Err(), boom) {
		t.Fatalf("after a read error: err %v, want %v", d.Err(), boom)
	}
}

// TestDecoderLastID: an event's id becomes the last event id when a blank line ends it, with
// data or without (a priming event); it carries over to later events without one; an id with
// a NUL is ignored; an event the body ends inside of does not set it.
func TestDecoderLastID(t *testing.T) {
	d := NewDecoder(strings.NewReader("id: p1\ndata:\n\nid: 7\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid: 9\ndata: cut"))
	defer d.Release()
	if d.LastID() != "" {
		t.Fatalf("LastID before any event = %q", d.LastID())
	}
	var got []string
	for d.Next() {
		got = append(got, string(d.Event().Data)+"@"+d.LastID())
	}
	if want := "a@7 b@7 c@7"; strings.Join(got, " ") != want {
		t.Errorf("events = %q, want %s", got, want)
	}
	if d.LastID() != "7" {
		t.Errorf("LastID after a cut event = %q, want 7", d.LastID())
	}
}

// lineReader yields n copies of line: a body of many short lines, none of them too long.
type lineReader struct {
	line []byte
	n    int
	off  int
	read int
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.line[r.off:])
	r.off += k
	r.read += k
	if r.off == len(r.line) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

func TestDecoderLongEvent(t *testing.T) {
	line := []byte("data: " + strings.Repeat("x", 64<<10) + "\n")
	r := &lineReader{line: line, n: (MaxLine / (64 << 10)) + 256} // ≈ 48 MiB of data in one event
	d := NewDecoder(r)
	defer d.Release()
	if d.Next() {
		t.Fatalf("an event whose data is past MaxLine was dispatched (%d bytes)", len(d.Event().Data))
	}
	if err := d.Err(); !errors.Is(err, bufio.ErrTooLong) || !strings.Contains(err.Error(), "event") {
		t.Fatalf("an oversize event: err %v, want bufio.ErrTooLong naming the event", err)
	}
	if r.read > MaxLine+2*len(line)+readBuffer {
		t.Errorf("the decoder read %d bytes before refusing an event over %d", r.read, MaxLine)
	}
	// Exactly MaxLine bytes of data in two lines is within the limit.
	half := strings.Repeat("y", MaxLine/2)
	events, _, err := decodeAll(t, "data: "+half+"\ndata: "+half[1:]+"\n\n", false)
	if err != nil || len(events) != 1 || len(events[0].Data) != MaxLine {
		t.Fatalf("an event of exactly MaxLine bytes: %d events, err %v", len(events), err)
	}
}
