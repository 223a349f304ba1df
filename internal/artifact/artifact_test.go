package artifact_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

// helloWorld is sha256("Hello\nworld\n"), computed independently (Python hashlib).
const helloWorld = "sha256:e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775"

// emptySum is sha256 of zero bytes.
const emptySum = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// TestNormalizationVectors is the golden table of NormalizationVersion 1. A change here is a
// change of the normalization: bump NormalizationVersion and document it.
func TestNormalizationVectors(t *testing.T) {
	if artifact.NormalizationVersion != 1 {
		t.Fatalf("NormalizationVersion = %d; these vectors are version 1", artifact.NormalizationVersion)
	}
	const hw = "Hello\nworld\n"
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Hello\nworld\n", hw},
		{"missing final newline", "Hello\nworld", hw},
		{"CRLF", "Hello\r\nworld\r\n", hw},
		{"CR only", "Hello\rworld\r", hw},
		{"mixed line endings", "Hello\r\nworld\r", hw},
		{"CR CR LF is two line breaks", "a\r\r\nb", "a\n\nb\n"},
		{"trailing spaces and tabs", "Hello  \t \nworld\t\n", hw},
		{"BOM", "\ufeffHello\nworld\n", hw},
		{"BOM and CRLF and no final newline", "\ufeffHello\r\nworld", hw},
		{"only the first BOM is removed", "\ufeff\ufeffx", "\ufeffx\n"},
		{"BOM inside is kept", "a\ufeff\n", "a\ufeff\n"},
		{"extra final newlines", "Hello\nworld\n\n\n", hw},
		{"trailing blank lines with spaces", "Hello\nworld\n  \n\t\n", hw},
		{"leading blank lines", "\n  \n\nHello\nworld\n", hw},
		{"interior blank lines kept", "a\n\n\n b\n", "a\n\n\n b\n"},
		{"interior whitespace-only lines become empty", "a\n \t \nb\n", "a\n\nb\n"},
		{"leading whitespace kept", "  a\n\tb\n", "  a\n\tb\n"},
		{"tabs inside kept", "a\tb\n", "a\tb\n"},
		{"no Unicode normalization", "cafe\u0301\n", "cafe\u0301\n"},
		{"NBSP is not whitespace", "a\u00a0\n", "a\u00a0\n"},
		{"ideographic space is not whitespace", "a\u3000\n", "a\u3000\n"},
		{"U+2028 is not a line break", "a\u2028b", "a\u2028b\n"},
		{"form feed and NUL kept", "a\fb\x00\n", "a\fb\x00\n"},
		{"empty", "", ""},
		{"only blank lines", " \n\t\n\r\n", ""},
		{"frontmatter", "---\nid: a\n---\nHello\nworld\n", hw},
		{"frontmatter, blank line after, CRLF", "---\r\nid: a\r\n---\r\n\r\nHello\r\nworld", hw},
		{"frontmatter after BOM", "\ufeff---\nid: a\n---\nHello\nworld\n", hw},
		{"delimiters with trailing whitespace", "--- \nid: a\n---\t\nHello\nworld\n", hw},
		{"frontmatter only", "---\nid: a\n---\n", ""},
		{"frontmatter without final newline", "---\nid: a\n---", ""},
		{"empty frontmatter", "---\n---\nbody", "body\n"},
		{"comment-only frontmatter", "---\n# nothing\n---\nbody", "body\n"},
		{"second --- in body is body", "---\na: 1\n---\nx\n---\ny\n", "x\n---\ny\n"},
		{"four dashes are not a delimiter", "----\nx", "----\nx\n"},
		{"indented dashes are not a delimiter", " ---\nx", " ---\nx\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := artifact.Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if string(a.Body) != tc.want {
				t.Errorf("body = %q, want %q", a.Body, tc.want)
			}
			if a.Digest != artifact.Sum([]byte(tc.want)) {
				t.Errorf("digest = %s, want sha256 of the normalized body", a.Digest)
			}
			if a.FileDigest != artifact.Sum([]byte(tc.in)) {
				t.Errorf("fileDigest = %s, want sha256 of the input", a.FileDigest)
			}
			if tc.want == hw && a.Digest != helloWorld {
				t.Errorf("digest = %s, want %s", a.Digest, helloWorld)
			}
			if tc.want == "" && a.Digest != emptySum {
				t.Errorf("digest = %s, want %s", a.Digest, emptySum)
			}
			// A normalized body is a fixed point, unless it starts with what steps 2 and 4 act
			// on (a BOM, a "---" line).
			if !strings.HasPrefix(tc.want, "\ufeff") && !strings.HasPrefix(tc.want, "---") {
				again, err := artifact.Normalize(a.Body)
				if err != nil || string(again) != string(a.Body) {
					t.Errorf("Normalize(body) = %q, %v; want it unchanged", again, err)
				}
			}
		})
	}
}

// TestDigestGolden pins the two digest forms to hex computed outside Go.
func TestDigestGolden(t *testing.T) {
	for _, tc := range []struct {
		in              string
		digest, fileDig string
		comment         string
	}{
		{"Hello\nworld\n", helloWorld, helloWorld, "normalized file: both equal"},
		{"Hello\r\nworld\r\n", helloWorld, "sha256:0e66eb579b92bad2e5ef38e2cc0fb95c55a58639050fe265b941784ca5e7023c", "CRLF"},
		{"---\nid: a\n---\nHello\nworld\n", helloWorld, "sha256:96f9084919bf8929719a81b36c80ac19729275cabf9ca4fe2309d41995fb1268", "frontmatter"},
		{"Hello\nworld!\n", "sha256:7e5b8d05a320ab0f843daa3645a257b57469359ba0eab5141d9d000dac977df1", "sha256:7e5b8d05a320ab0f843daa3645a257b57469359ba0eab5141d9d000dac977df1", "body change"},
		{"", emptySum, emptySum, "empty"},
	} {
		d, fd, err := artifact.Digests([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.comment, err)
		}
		if string(d) != tc.digest || string(fd) != tc.fileDig {
			t.Errorf("%s: got (%s, %s), want (%s, %s)", tc.comment, d, fd, tc.digest, tc.fileDig)
		}
	}
}

// TestDigestSensitivity: what must and must not move each digest.
func TestDigestSensitivity(t *testing.T) {
	base := "---\nid: spec\ntype: specification\n---\n\n# Spec\n\nThe system shall log.\n"
	digests := func(s string) (artifact.Digest, artifact.Digest) {
		t.Helper()
		d, fd, err := artifact.Digests([]byte(s))
		if err != nil {
			t.Fatalf("Digests(%q): %v", s, err)
		}
		return d, fd
	}
	d0, fd0 := digests(base)
	for _, tc := range []struct {
		name         string
		in           string
		digestChange bool
	}{
		{"frontmatter value edited", "---\nid: spec\ntype: plan\n---\n\n# Spec\n\nThe system shall log.\n", false},
		{"frontmatter key added", "---\nid: spec\ntype: specification\nattempt: 2\n---\n\n# Spec\n\nThe system shall log.\n", false},
		{"frontmatter reordered", "---\ntype: specification\nid: spec\n---\n\n# Spec\n\nThe system shall log.\n", false},
		{"blank line after frontmatter removed", "---\nid: spec\ntype: specification\n---\n# Spec\n\nThe system shall log.\n", false},
		{"CRLF", "---\r\nid: spec\r\ntype: specification\r\n---\r\n\r\n# Spec\r\n\r\nThe system shall log.\r\n", false},
		{"trailing spaces", "---\nid: spec\ntype: specification\n---\n\n# Spec   \n\nThe system shall log.\t\n", false},
		{"BOM", "\ufeff" + base, false},
		{"no final newline", base[:len(base)-1], false},
		{"body word", "---\nid: spec\ntype: specification\n---\n\n# Spec\n\nThe system shall not log.\n", true},
		{"body punctuation", "---\nid: spec\ntype: specification\n---\n\n# Spec\n\nThe system shall log!\n", true},
		{"body indentation", "---\nid: spec\ntype: specification\n---\n\n# Spec\n\n The system shall log.\n", true},
		{"body interior blank line", "---\nid: spec\ntype: specification\n---\n\n# Spec\n\n\nThe system shall log.\n", true},
		{"frontmatter removed (body unchanged)", "# Spec\n\nThe system shall log.\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, fd := digests(tc.in)
			if fd == fd0 {
				t.Errorf("fileDigest unchanged; every byte change must change it")
			}
			if (d != d0) != tc.digestChange {
				t.Errorf("digest changed = %v, want %v", d != d0, tc.digestChange)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"invalid UTF-8", "Hello \xff\n"},
		{"unterminated frontmatter", "---\nid: a\nbody\n"},
		{"scalar frontmatter", "---\njust text\n---\nbody"},
		{"null frontmatter", "---\n~\n---\nbody"},
		{"list frontmatter", "---\n- a\n- b\n---\nbody"},
		{"duplicate key", "---\nid: a\nid: b\n---\nbody"},
		{"YAML syntax", "---\na: [1, 2\n---\nbody"},
		{"two documents", "---\na: 1\n...\nb: 2\n---\nbody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := artifact.Parse([]byte(tc.in))
			if !errors.Is(err, artifact.ErrMalformed) {
				t.Fatalf("Parse = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestDecodeFrontmatter(t *testing.T) {
	type header struct {
		ID      string   `yaml:"id"`
		Type    string   `yaml:"type"`
		Attempt int      `yaml:"attempt"`
		Inputs  []string `yaml:"inputs"`
	}
	a, err := artifact.Parse([]byte("---\r\nid: spec\r\ntype: specification\r\nattempt: 2\r\ninputs: [research, snapshot]\r\n---\r\nbody\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Frontmatter) != "id: spec\ntype: specification\nattempt: 2\ninputs: [research, snapshot]\n" {
		t.Errorf("Frontmatter = %q", a.Frontmatter)
	}
	var h header
	if err := a.DecodeFrontmatter(&h); err != nil {
		t.Fatal(err)
	}
	if h.ID != "spec" || h.Type != "specification" || h.Attempt != 2 || len(h.Inputs) != 2 {
		t.Errorf("decoded %+v", h)
	}

	a, _ = artifact.Parse([]byte("---\nid: spec\nextra: 1\n---\nbody"))
	if err := a.DecodeFrontmatter(&h); !errors.Is(err, artifact.ErrMalformed) {
		t.Errorf("unknown field: %v, want ErrMalformed", err)
	}
	a, _ = artifact.Parse([]byte("body only\n"))
	if a.Frontmatter != nil {
		t.Errorf("Frontmatter = %q, want nil", a.Frontmatter)
	}
	if err := a.DecodeFrontmatter(&h); !errors.Is(err, artifact.ErrMalformed) {
		t.Errorf("no frontmatter: %v, want ErrMalformed", err)
	}
	a, _ = artifact.Parse([]byte("---\n---\nbody"))
	if a.Frontmatter == nil || len(a.Frontmatter) != 0 {
		t.Errorf("empty block: Frontmatter = %q, want empty and not nil", a.Frontmatter)
	}
	if err := a.DecodeFrontmatter(&h); err != nil {
		t.Errorf("empty block: %v", err)
	}
}

func TestParseDigest(t *testing.T) {
	if _, err := artifact.ParseDigest(helloWorld); err != nil {
		t.Errorf("valid digest: %v", err)
	}
	for _, s := range []string{
		"", "sha256:", "e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775",
		"sha256:E0BFBB0C2D280FC86313AC988E6B5315D2A57844335CF62146B65B6A62820775",
		"sha512:e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775",
		helloWorld + "0", helloWorld[:len(helloWorld)-1] + "g",
	} {
		if _, err := artifact.ParseDigest(s); !errors.Is(err, artifact.ErrInvalidDigest) {
			t.Errorf("ParseDigest(%q) = %v, want ErrInvalidDigest", s, err)
		}
	}
	if h := artifact.Digest(helloWorld).Hex(); h != helloWorld[7:] {
		t.Errorf("Hex = %q", h)
	}
}
