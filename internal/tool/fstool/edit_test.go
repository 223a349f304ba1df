package fstool

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/tool"
)

type ed = map[string]any

func edits(pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, ed{"oldText": pairs[i], "newText": pairs[i+1]})
	}
	return out
}

func TestEditRules(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		edits   []any
		want    string // file content afterwards, when no error
		wantErr string
		note    bool // result mentions fuzzy matching
	}{
		{name: "single", file: "a\nb\nc\n", edits: edits("b\n", "B\n"), want: "a\nB\nc\n"},
		{name: "multi against original", file: "a\nb\nc\n", edits: edits("a", "b", "b", "c"), want: "b\nc\nc\n"},
		{name: "adjacent", file: "abcd", edits: edits("ab", "1", "cd", "2"), want: "12"},
		{name: "delete", file: "keep\ndrop\nkeep2\n", edits: edits("drop\n", ""), want: "keep\nkeep2\n"},
		{name: "not found", file: "a\n", edits: edits("zzz", "y"),
			wantErr: "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."},
		{name: "not found multi", file: "a\n", edits: edits("a", "b", "zzz", "y"),
			wantErr: "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."},
		{name: "not unique", file: "x\nx\n", edits: edits("x", "y"),
			wantErr: "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."},
		{name: "not unique multi", file: "a\nx\nx\nx\n", edits: edits("a", "b", "x", "y"),
			wantErr: "Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."},
		{name: "overlap", file: "abcdef", edits: edits("cde", "1", "abc", "2"),
			wantErr: "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."},
		{name: "empty oldText", file: "a", edits: edits("", "x"),
			wantErr: "oldText is empty in f.txt."},
		{name: "empty oldText multi", file: "a", edits: edits("a", "b", "", "x"),
			wantErr: "edits[1].oldText is empty in f.txt."},
		{name: "no-op", file: "a\n", edits: edits("a", "a"),
			wantErr: "No changes made to f.txt. The replacement produced identical content."},
		{name: "crlf preserved", file: "one\r\ntwo\r\nthree\r\n", edits: edits("two\nthree\n", "2\n3\n"), want: "one\r\n2\r\n3\r\n"},
		{name: "crlf in oldText", file: "one\r\ntwo\r\n", edits: edits("one\r\ntwo", "1\r\n2"), want: "1\r\n2\r\n"},
		{name: "bom preserved", file: "\uFEFFhello\n", edits: edits("hello", "bye"), want: "\uFEFFbye\n"},
		{name: "bom and crlf", file: "\uFEFFa\r\nb\r\n", edits: edits("a\nb", "c\nd\ne"), want: "\uFEFFc\r\nd\r\ne\r\n"},
		{name: "lf stays lf", file: "a\nb\n", edits: edits("a\r\nb", "x\r\ny"), want: "x\ny\n"},
		{name: "fuzzy trailing whitespace", file: "func f() {   \n\treturn 1\t\n}\nother   \n",
			edits: edits("func f() {\n\treturn 1\n}", "func f() {\n\treturn 2\n}"), want: "func f() {\n\treturn 2\n}\nother   \n", note: true},
		{name: "fuzzy quotes and dashes", file: "say(“hi”) — ok\nsay(‘x’)\n",
			edits: edits(`say("hi") - ok`, `say("hello")`), want: "say(\"hello\")\nsay(‘x’)\n", note: true},
		{name: "fuzzy nbsp", file: "a\u00A0b\n", edits: edits("a b", "ab"), want: "ab\n", note: true},
		{name: "fuzzy no match", file: "x “y”\nx \"y\"  \n", edits: edits("x 'y'", "z"),
			wantErr: "Could not find the exact text"},
		{name: "fuzzy ambiguous", file: "x “y”\nx \"y\"  \n", edits: edits("x ‟y‟", "z"),
			wantErr: "Found 2 occurrences of the text in f.txt."},
		{name: "exact preferred over fuzzy", file: "a  \na\n", edits: edits("a  \n", "b\n"), want: "b\na\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWS(t)
			writeFile(t, ws, "f.txt", tt.file)
			res, err := call(t, Edit(ws), ed{"path": "f.txt", "edits": tt.edits})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if got := readFile(t, ws, "f.txt"); got != tt.file {
					t.Errorf("file changed on error: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, ws, "f.txt"); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			wantText := fmt.Sprintf("Successfully replaced %d block(s) in f.txt.", len(tt.edits))
			if got := text(res); !strings.HasPrefix(got, wantText) {
				t.Errorf("result %q", got)
			}
			d := res.Details.(EditDetails)
			hasNote := strings.Contains(text(res), "fuzzy matching")
			if hasNote != tt.note || (len(d.FuzzyEdits) > 0) != tt.note {
				t.Errorf("fuzzy reported: text %v, details %v; want %v\n%s", hasNote, d.FuzzyEdits, tt.note, text(res))
			}
		})
	}
}

func TestEditDetails(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "f.txt", lines(20, lineN))
	res, err := call(t, Edit(ws), ed{"path": "f.txt", "edits": edits("line 9\nline 10\n", "line 9\nTEN\n", "line 15", "FIFTEEN")})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Details.(EditDetails)
	if d.FirstChangedLine != 10 {
		t.Errorf("firstChangedLine = %d", d.FirstChangedLine)
	}
	for _, want := range []string{"--- f.txt\n+++ f.txt\n", "@@ -6,14 +6,14 @@", "-line 10\n+TEN\n", "-line 15\n+FIFTEEN\n", " line 6\n"} {
		if !strings.Contains(d.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, d.Diff)
		}
	}
}

func TestEditFuzzyReportNamesEdits(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "f.txt", "a  \nb\nc\u2019s\n")
	res, err := call(t, Edit(ws), ed{"path": "f.txt", "edits": edits("b", "B", "a\n", "A\n", "c's", "C")})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Details.(EditDetails); !cmp.Equal(d.FuzzyEdits, []int{1, 2}) {
		t.Errorf("fuzzyEdits = %v", d.FuzzyEdits)
	}
	if !strings.Contains(text(res), "edits[1], edits[2] had no exact match and were applied with fuzzy matching") {
		t.Errorf("text %q", text(res))
	}
	if got := readFile(t, ws, "f.txt"); got != "A\nB\nC\n" {
		t.Errorf("file %q", got)
	}
}

func TestEditArgumentShapes(t *testing.T) {
	ws := newWS(t)
	e := Edit(ws)
	writeFile(t, ws, "f.txt", "one two three")
	mustText(t, e, `{"path":"f.txt","edits":"[{\"oldText\":\"one\",\"newText\":\"1\"}]"}`)
	mustText(t, e, `{"path":"f.txt","oldText":"two","newText":"2"}`)
	mustText(t, e, `{"path":"f.txt","edits":[{"oldText":"1","newText":"uno"}],"oldText":"three","newText":"3"}`)
	if got := readFile(t, ws, "f.txt"); got != "uno 2 3" {
		t.Errorf("file %q", got)
	}
	for raw, want := range map[string]string{
		`{"path":"f.txt","edits":[]}`:                        "edits: must have at least 1 items; got 0",
		`{"path":"f.txt","edits":"not json"}`:                "edits was sent as a string that is not a JSON array",
		`{"path":"f.txt","oldText":"x"}`:                     "edits[0].newText: missing required property",
		`{"path":"f.txt","edits":[{"oldText":"x","new":1}]}`: "edits[0].new: unknown property",
	} {
		if _, err := tool.ValidateCall(e, raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

func TestEditMissingFile(t *testing.T) {
	ws := newWS(t)
	got := errText(t, Edit(ws), ed{"path": "nope.txt", "edits": edits("a", "b")})
	if !strings.HasPrefix(got, "Could not edit file: nope.txt. Error code: ENOENT. Use write to create a new file.") {
		t.Errorf("error %q", got)
	}
}

// TestEditSamePathSerialized runs many concurrent edits of one file; each must see the
// previous one's result, or some replacements would be lost.
func TestEditSamePathSerialized(t *testing.T) {
	ws := newWS(t)
	const n = 32
	writeFile(t, ws, "f.txt", lines(n, func(i int) string { return fmt.Sprintf("todo %d.", i) }))
	e, w := Edit(ws), Write(ws)
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			valid, err := tool.ValidateCall(e, fmt.Sprintf(`{"path":"f.txt","edits":[{"oldText":"todo %d.","newText":"done %d."}]}`, i, i))
			if err == nil {
				_, err = e.Run(context.Background(), tool.Call{Args: valid})
			}
			errs <- err
		})
	}
	wg.Go(func() {
		_, err := w.Run(context.Background(), tool.Call{Args: []byte(`{"path":"other.txt","content":"x"}`)})
		errs <- err
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got, want := readFile(t, ws, "f.txt"), lines(n, func(i int) string { return fmt.Sprintf("done %d.", i) }); got != want {
		t.Errorf("lost updates:\n%s", got)
	}
}

func TestLockPathCancel(t *testing.T) {
	unlock, err := lockPath(context.Background(), "/k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lockPath(ctx, "/k"); err != context.Canceled {
		t.Errorf("waiting on a held lock with a cancelled context: %v", err)
	}
	unlock()
	unlock2, err := lockPath(context.Background(), "/k")
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
	pathLocks.Lock()
	defer pathLocks.Unlock()
	if len(pathLocks.m) != 0 {
		t.Errorf("locks left: %v", pathLocks.m)
	}
}

func bigFile() string {
	return lines(5000, func(i int) string {
		return fmt.Sprintf("\tvalue%d := compute(%d, \"some text here\") // comment %d", i, i, i)
	})
}

func BenchmarkEdit5000Lines(b *testing.B) {
	ws := newWS(b)
	content := bigFile()
	e := Edit(ws)
	args := []byte(`{"path":"big.go","edits":[{"oldText":"\tvalue2500 := compute(2500,","newText":"\tvalue2500 := compute(-1,"},{"oldText":"comment 4999\n","newText":"changed\n"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		writeFile(b, ws, "big.go", content)
		b.StartTimer()
		if _, err := e.Run(context.Background(), tool.Call{Args: args}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyEdits5000Lines(b *testing.B) {
	content := bigFile()
	es := []Replacement{{OldText: "\tvalue2500 := compute(2500,", NewText: "\tvalue2500 := compute(-1,"}, {OldText: "comment 4999\n", NewText: "changed\n"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := applyEdits(content, "big.go", es); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyEdits5000LinesFuzzy(b *testing.B) {
	content := bigFile()
	es := []Replacement{{OldText: "\tvalue2500 := compute(2500, “some text here”)", NewText: "x"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := applyEdits(content, "big.go", es); err != nil {
			b.Fatal(err)
		}
	}
}
