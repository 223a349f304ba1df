package fstool

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func lineN(i int) string { return fmt.Sprintf("line %d", i) }

func TestReadText(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "ten.txt", lines(10, lineN))
	writeFile(t, ws, "many.txt", lines(2500, lineN))
	writeFile(t, ws, "wide.txt", lines(100, func(int) string { return strings.Repeat("w", 1000) }))
	long := strings.Repeat("x", 60000)
	writeFile(t, ws, "long.txt", long+"\nshort\n")
	writeFile(t, ws, "long2.txt", "short\n"+long+"\n")
	writeFile(t, ws, "nonl.txt", "a\nb")
	writeFile(t, ws, "crlf.txt", "a\r\nb\r\n")
	writeFile(t, ws, "empty.txt", "")
	writeFile(t, ws, "blank.txt", "\n\n\n")

	r := Read(ws)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"whole", map[string]any{"path": "ten.txt"}, strings.TrimSuffix(lines(10, lineN), "\n")},
		{"offset and limit", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2},
			"line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"},
		{"limit reaching the end", map[string]any{"path": "ten.txt", "offset": 9, "limit": 2}, "line 9\nline 10"},
		{"limit past the end", map[string]any{"path": "ten.txt", "offset": 9, "limit": 50}, "line 9\nline 10"},
		{"last line", map[string]any{"path": "ten.txt", "offset": 10}, "line 10"},
		{"line limit", map[string]any{"path": "many.txt"},
			strings.TrimSuffix(lines(2000, lineN), "\n") + "\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"},
		{"continue after line limit", map[string]any{"path": "many.txt", "offset": 2001},
			strings.TrimSuffix(strings.Join(strings.Split(lines(2500, lineN), "\n")[2000:], "\n"), "\n")},
		{"line limit with user limit", map[string]any{"path": "many.txt", "offset": 101, "limit": 2100},
			strings.Join(strings.Split(lines(2100, lineN), "\n")[100:2100], "\n") + "\n\n[Showing lines 101-2100 of 2500. Use offset=2101 to continue.]"},
		{"byte limit", map[string]any{"path": "wide.txt"},
			strings.TrimSuffix(lines(51, func(int) string { return strings.Repeat("w", 1000) }), "\n") +
				"\n\n[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]"},
		{"first line too long", map[string]any{"path": "long.txt"},
			"[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c 51200]"},
		{"line at offset too long", map[string]any{"path": "long2.txt", "offset": 2},
			"[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' long2.txt | head -c 51200]"},
		{"long line after short one", map[string]any{"path": "long2.txt"},
			"short\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue.]"},
		{"no final newline", map[string]any{"path": "nonl.txt", "limit": 2}, "a\nb"},
		{"crlf shown as lines", map[string]any{"path": "crlf.txt"}, "a\nb"},
		{"empty file", map[string]any{"path": "empty.txt"}, "(empty file)"},
		{"empty file offset 1", map[string]any{"path": "empty.txt", "offset": 1}, "(empty file)"},
		{"blank lines", map[string]any{"path": "blank.txt", "offset": 2, "limit": 1}, "\n\n[1 more lines in file. Use offset=3 to continue.]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustText(t, r, tt.args); got != tt.want {
				t.Errorf("got %d bytes:\n%.300q\nwant %d bytes:\n%.300q", len(got), tail(got), len(tt.want), tail(tt.want))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 200 {
		return "..." + s[len(s)-200:]
	}
	return s
}

func TestReadDetails(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "many.txt", lines(2500, lineN))
	res, err := call(t, Read(ws), map[string]any{"path": "many.txt", "offset": 11})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := res.Details.(ReadDetails)
	if !ok || d.Truncation == nil {
		t.Fatalf("details = %#v", res.Details)
	}
	tr := d.Truncation
	if !tr.Truncated || tr.By != tool.TruncatedByLines || tr.TotalLines != 2490 || tr.OutputLines != 2000 || tr.MaxLines != tool.MaxLines {
		t.Errorf("truncation = %+v", tr)
	}
	if !strings.HasSuffix(text(res), "[Showing lines 11-2010 of 2500. Use offset=2011 to continue.]") {
		t.Errorf("notice: %q", tail(text(res)))
	}
}

func TestReadErrors(t *testing.T) {
	ws := newWS(t)
	writeFile(t, ws, "ten.txt", lines(10, lineN))
	writeFile(t, ws, "bin.dat", "abc\x00def")
	writeFile(t, ws, "dir/x", "")
	r := Read(ws)
	for args, want := range map[string]string{
		`{"path":"ten.txt","offset":11}`: "Offset 11 is beyond end of file (10 lines total)",
		`{"path":"bin.dat"}`:             "bin.dat is a binary file (application/octet-stream, 7B); read returns text",
		`{"path":"dir"}`:                 "dir is a directory; use ls to list it",
		`{"path":"nope.txt"}`:            "path not found: nope.txt",
	} {
		if got := errText(t, r, args); !strings.Contains(got, want) {
			t.Errorf("%s: error %q, want it to contain %q", args, got, want)
		}
	}
}

func TestReadImage(t *testing.T) {
	ws := newWS(t)
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "pic.bin", buf.String()) // sniffed by content, not by name
	res, err := call(t, Read(ws), map[string]any{"path": "pic.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || res.Content[0].Text != "Read image file [image/png]" ||
		res.Content[1].Type != llm.PartImage || res.Content[1].MIMEType != "image/png" || !bytes.Equal(res.Content[1].Data, buf.Bytes()) {
		t.Errorf("content = %+v", res.Content)
	}
}

func TestReadSchema(t *testing.T) {
	_, err := tool.ValidateCall(Read(nil), `{"path":"a","offset":0}`)
	if err == nil || !strings.Contains(err.Error(), "offset: must be >= 1; got 0") {
		t.Errorf("offset 0: %v", err)
	}
}

func TestNonRegularFilesRefused(t *testing.T) {
	ws := newWS(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Dir, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, tl := range []tool.Tool{Read(ws), Write(ws), Edit(ws)} {
		args := map[string]any{"path": "pipe", "content": "x", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}
		switch tl.Spec().Name {
		case "read":
			delete(args, "content")
			delete(args, "edits")
		case "write":
			delete(args, "edits")
		case "edit":
			delete(args, "content")
		}
		if got := errText(t, tl, args); !strings.Contains(got, "pipe is not a regular file") {
			t.Errorf("%s: %q", tl.Spec().Name, got)
		}
	}
}
