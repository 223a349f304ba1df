package rpc

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, input string, max int) []string {
	t.Helper()
	l := newLineReader(strings.NewReader(input), max)
	var out []string
	for {
		line, tooLong, err := l.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if tooLong {
			out = append(out, "<too long>")
			continue
		}
		out = append(out, string(line))
	}
}

func TestLineFraming(t *testing.T) {
	sep := "\u2028"
	for _, c := range []struct {
		name, input string
		max         int
		want        []string
	}{
		{"lf", "a\nb\n", 10, []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"lone cr is data", "a\rb\n", 10, []string{"a\rb"}},
		{"unicode separators are data", "a" + sep + "b\n", 10, []string{"a" + sep + "b"}},
		{"last line without lf", "a\nb", 10, []string{"a", "b"}},
		{"empty lines", "\n\na\n", 10, []string{"", "", "a"}},
		{"exactly max", "abcd\nx\n", 4, []string{"abcd", "x"}},
		{"exactly max with cr", "abcd\r\nx\n", 4, []string{"abcd", "x"}},
		{"over max", "abcde\nx\n", 4, []string{"<too long>", "x"}},
		{"over max at eof", "x\nabcde", 4, []string{"x", "<too long>"}},
		{"far over the buffer", strings.Repeat("y", 200<<10) + "\nok\n", 1 << 10, []string{"<too long>", "ok"}},
		{"long line within max", strings.Repeat("z", 200<<10) + "\n", 1 << 20, []string{strings.Repeat("z", 200<<10)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := readAll(t, c.input, c.max)
			if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
				if len(c.input) < 100 {
					t.Errorf("%q: got %q, want %q", c.input, got, c.want)
				} else {
					t.Errorf("got %d lines, want %d", len(got), len(c.want))
				}
			}
		})
	}
}
