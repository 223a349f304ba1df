package view

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

func TestWords(t *testing.T) {
	for in, want := range map[string]string{"specItemIds": "spec item ids", "baseURL": "base URL", "id": "id",
		"inputReferences": "input references", "URLPath": "URL path", "costUsd": "cost usd"} {
		if got := words(in); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func render(t *testing.T, a Artifact) string {
	t.Helper()
	text, err := Render(a)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestRenderShapes(t *testing.T) {
	data := []byte("---\nid: x\ntype: x\ncreated: 2026-01-01T00:00:00Z\n---\n# X\n\n```json\n" +
		`{"zeta": "first key stays first", "title": "line one\n## Forged heading\n\u001b[31mred", "nested": [[1, 2], []], "flag": false,` +
		` "none": null, "obj": {"inner": {"deep": "v"}}, "references": ["known", "unknown"]}` + "\n```\n\nprose after\n")
	digest, fileDigest, err := artifact.Digests(data)
	if err != nil {
		t.Fatal(err)
	}
	a := Artifact{ID: "x", Path: "x.md", Digest: string(digest), FileDigest: string(fileDigest), Data: data,
		Ref: func(id string) (string, bool) { return "sha256:k", id == "known" }}
	text := render(t, a)
	for _, w := range []string{
		"created: 2026-01-01T00:00:00Z\n", "inputs: (none recorded)\n",
		"## Zeta\nfirst key stays first\n\n## Title\nline one\n  ## Forged heading\n  \\x1b[31mred\n",
		"## Nested\n-\n  - 1\n  - 2\n- (none)\n", "## Flag\nno\n", "## None\n(none)\n",
		"## Obj\ninner:\n  deep: v\n", "## References\n- known (sha256:k)\n- unknown (no artifact of this run has this id)\n",
		"prose after\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("rendered without %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "\n## Forged") || strings.Contains(text, "\x1b") || strings.Contains(text, "WARNING") {
		t.Errorf("rendered with a forged heading, a raw escape or a false warning:\n%s", text)
	}
	if got := References(data); strings.Join(got, ",") != "known,unknown" {
		t.Errorf("References = %q", got)
	}

	changed := a
	changed.Data = append([]byte(nil), data...)
	changed.Data = []byte(strings.Replace(string(changed.Data), "prose after", "prose changed", 1))
	if text := render(t, changed); !strings.Contains(text, "WARNING: the file's digest is now sha256:") {
		t.Errorf("a changed body is not flagged:\n%s", text)
	}

	bad := Artifact{ID: "b", Path: "b.md", Data: []byte("# B\n\n```json\n{\"a\": 1,}\n```\n")}
	if text := render(t, bad); !strings.Contains(text, "(this block is not valid JSON") || !strings.Contains(text, "{\"a\": 1,}") {
		t.Errorf("an invalid block is not shown as written:\n%s", text)
	}
	if _, err := Render(Artifact{Data: []byte("\xff")}); err == nil {
		t.Error("invalid UTF-8 rendered without an error")
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("a", "b", "x\ny\n", "x\ny\n"); d != "" {
		t.Errorf("diff of equal texts = %q", d)
	}
	d := Diff("a\x1b", "b", "x\ny\nz\n", "x\nY\nz\n")
	for _, w := range []string{"--- a\\x1b\n", "+++ b\n", " x\n-y\n+Y\n z\n"} {
		if !strings.Contains(d, w) {
			t.Errorf("diff lacks %q:\n%s", w, d)
		}
	}
}
