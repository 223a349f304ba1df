package termtext

import (
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\nsecond line\tand a tab", "plain text\nsecond line\tand a tab"},
		{"héllo wörld — ✓ 日本", "héllo wörld — ✓ 日本"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\a`},           // OSC 52 clipboard write
		{"\x1b]0;owned\x1b\\", `\x1b]0;owned\x1b\`},                          // window title
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},                                   // clear screen
		{"safe\rEVIL", `safe\rEVIL`},                                         // overwrite the line
		{"a\bb\x7f\x00", `a\bb\x7f\x00`},                                     // backspace, DEL, NUL
		{"\u009b31m", `\x9b31m`},                                             // one-byte CSI (C1)
		{"\u202eevil\u202c \u2066x\u2069", `\u202eevil\u202c \u2066x\u2069`}, // bidi overrides
		{"bad \xff\xfe bytes", `bad \xff\xfe bytes`},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ContainsAny(Visible(c.in), "\x1b\r\x07\u009b") {
			t.Errorf("Visible(%q) still holds a control character", c.in)
		}
	}
}

func FuzzVisible(f *testing.F) {
	f.Add("\x1b]52;c;x\x07")
	f.Add("\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Visible(s)
		if firstUnsafe(out) >= 0 {
			t.Fatalf("Visible(%q) = %q holds a control sequence", s, out)
		}
	})
}
