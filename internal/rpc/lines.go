package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLine is the longest command line accepted by default.
const DefaultMaxLine = 8 << 20

// lineReader splits input into lines at "\n" only (a "\r" before it is dropped; U+2028 and
// U+2029 are ordinary characters). A line longer than max is read to its end, discarded and
// reported as too long, so one oversize line costs no more than max bytes of memory. A last
// line without "\n" still counts.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its terminator. At the end of input it returns io.EOF
// (after the last line); other read errors are returned as they are.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	var buf []byte
	got := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		got = got || len(chunk) > 0
		if !tooLong {
			if len(buf)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > l.max+1 { // +1: a "\r" to drop
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
		case errors.Is(err, io.EOF) && got:
		default:
			return nil, false, err
		}
		break
	}
	if tooLong {
		return nil, true, nil
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	buf = bytes.TrimSuffix(buf, []byte("\r"))
	if len(buf) > l.max {
		return nil, true, nil
	}
	return buf, false, nil
}
