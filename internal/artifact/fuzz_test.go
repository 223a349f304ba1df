package artifact

import (
	"bytes"
	"testing"
)

// FuzzParse checks the invariants of the normalization on arbitrary input: Parse never panics;
// the body step is idempotent; the body ends in exactly one LF (or is empty), has no CR, no
// trailing space or tab on any line and no leading or trailing empty line; the digests are the
// sums they claim; and the canonical JSON of a reference built from the input parses back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "Hello\nworld\n", "\ufeff---\r\nid: a\r\n---\r\n\r\nbody  \r\n\r\n", "a\r\r\nb", "---\n- x\n---\n",
		"---\na: 1\n---\n---\nz\n", " \n\t\n", "x\u2028y\u00a0 \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data)
		if err != nil {
			return
		}
		b := a.Body
		if again := normalizeBody(b); !bytes.Equal(again, b) {
			t.Fatalf("normalizeBody not idempotent: %q -> %q", b, again)
		}
		if len(b) > 0 {
			if b[len(b)-1] != '\n' || bytes.HasSuffix(b, []byte("\n\n")) || b[0] == '\n' {
				t.Fatalf("body edges wrong: %q", b)
			}
		}
		if bytes.IndexByte(b, '\r') >= 0 || bytes.Contains(b, []byte(" \n")) || bytes.Contains(b, []byte("\t\n")) {
			t.Fatalf("body keeps CR or trailing whitespace: %q", b)
		}
		if a.Digest != Sum(b) || a.FileDigest != Sum(data) {
			t.Fatal("digests are not the sums of body and file")
		}
		p := Pack{Name: string(b), References: []Reference{{ID: string(b) + "x", Path: "a.md", Digest: a.Digest, FileDigest: a.FileDigest}}}
		c, err := p.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParsePack(c)
		if err != nil {
			t.Fatalf("canonical JSON %q does not parse: %v", c, err)
		}
		if c2, _ := back.Canonical(); !bytes.Equal(c, c2) {
			t.Fatalf("canonical JSON not stable: %q vs %q", c, c2)
		}
	})
}
