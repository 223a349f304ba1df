package tool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

func TestTruncateHead(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		lines int
		bytes int
		want  Truncation
	}{
		{
			name: "empty", text: "", lines: 3, bytes: 10,
			want: Truncation{MaxLines: 3, MaxBytes: 10},
		},
		{
			name: "fits exactly", text: "aa\nbb\ncc", lines: 3, bytes: 8,
			want: Truncation{Content: "aa\nbb\ncc", TotalLines: 3, TotalBytes: 8, OutputLines: 3, OutputBytes: 8, MaxLines: 3, MaxBytes: 8},
		},
		{
			name: "final newline is free", text: "aa\nbb\ncc\n", lines: 3, bytes: 8,
			want: Truncation{Content: "aa\nbb\ncc\n", TotalLines: 3, TotalBytes: 9, OutputLines: 3, OutputBytes: 9, MaxLines: 3, MaxBytes: 8},
		},
		{
			name: "one line too many", text: "aa\nbb\ncc\ndd\n", lines: 3, bytes: 100,
			want: Truncation{Content: "aa\nbb\ncc", Truncated: true, By: TruncatedByLines, TotalLines: 4, TotalBytes: 12, OutputLines: 3, OutputBytes: 8, MaxLines: 3, MaxBytes: 100},
		},
		{
			name: "one byte too many", text: "aa\nbb\nccc", lines: 10, bytes: 8,
			want: Truncation{Content: "aa\nbb", Truncated: true, By: TruncatedByBytes, TotalLines: 3, TotalBytes: 9, OutputLines: 2, OutputBytes: 5, MaxLines: 10, MaxBytes: 8},
		},
		{
			name: "bytes boundary on newline", text: "aa\nbb\ncc", lines: 10, bytes: 6,
			want: Truncation{Content: "aa\nbb", Truncated: true, By: TruncatedByBytes, TotalLines: 3, TotalBytes: 8, OutputLines: 2, OutputBytes: 5, MaxLines: 10, MaxBytes: 6},
		},
		{
			name: "first line too long", text: "abcdefghijk\nb", lines: 10, bytes: 5,
			want: Truncation{Truncated: true, By: TruncatedByBytes, FirstLineExceedsLimit: true, TotalLines: 2, TotalBytes: 13, MaxLines: 10, MaxBytes: 5},
		},
		{
			name: "lines hit before bytes", text: "a\nb\nc\n", lines: 2, bytes: 3,
			want: Truncation{Content: "a\nb", Truncated: true, By: TruncatedByLines, TotalLines: 3, TotalBytes: 6, OutputLines: 2, OutputBytes: 3, MaxLines: 2, MaxBytes: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateHead(tt.text, tt.lines, tt.bytes)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TruncateHead(%q) mismatch (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestTruncateTail(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		lines int
		bytes int
		want  Truncation
	}{
		{
			name: "fits", text: "a\nb\n", lines: 2, bytes: 3,
			want: Truncation{Content: "a\nb\n", TotalLines: 2, TotalBytes: 4, OutputLines: 2, OutputBytes: 4, MaxLines: 2, MaxBytes: 3},
		},
		{
			name: "lines", text: "a\nb\nc\nd\n", lines: 2, bytes: 100,
			want: Truncation{Content: "c\nd\n", Truncated: true, By: TruncatedByLines, TotalLines: 4, TotalBytes: 8, OutputLines: 2, OutputBytes: 4, MaxLines: 2, MaxBytes: 100},
		},
		{
			name: "bytes", text: "aaa\nbb\ncc", lines: 100, bytes: 6,
			want: Truncation{Content: "bb\ncc", Truncated: true, By: TruncatedByBytes, TotalLines: 3, TotalBytes: 9, OutputLines: 2, OutputBytes: 5, MaxLines: 100, MaxBytes: 6},
		},
		{
			name: "partial last line", text: "a\n0123456789", lines: 100, bytes: 4,
			want: Truncation{Content: "6789", Truncated: true, By: TruncatedByBytes, LastLinePartial: true, TotalLines: 2, TotalBytes: 12, OutputLines: 1, OutputBytes: 4, MaxLines: 100, MaxBytes: 4},
		},
		{
			name: "partial keeps utf8 whole", text: "ééééé", lines: 100, bytes: 5,
			want: Truncation{Content: "éé", Truncated: true, By: TruncatedByBytes, LastLinePartial: true, TotalLines: 1, TotalBytes: 10, OutputLines: 1, OutputBytes: 4, MaxLines: 100, MaxBytes: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateTail(tt.text, tt.lines, tt.bytes)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TruncateTail(%q) mismatch (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestTruncateDefaults(t *testing.T) {
	// 2000 lines exactly is not truncated; 2001 is.
	text := numbered(MaxLines)
	if got := TruncateHead(text, MaxLines, MaxBytes); got.Truncated {
		t.Errorf("2000 lines truncated: %+v", got)
	}
	got := TruncateHead(numbered(MaxLines+1), MaxLines, MaxBytes)
	if !got.Truncated || got.By != TruncatedByLines || got.OutputLines != MaxLines || got.TotalLines != MaxLines+1 {
		t.Errorf("2001 lines: %+v", got)
	}
	tail := TruncateTail(numbered(MaxLines+1), MaxLines, MaxBytes)
	if !strings.HasPrefix(tail.Content, "line xx\n") || tail.OutputLines != MaxLines {
		t.Errorf("tail kept %d lines starting %q", tail.OutputLines, tail.Content[:10])
	}

	// Exactly 50 KiB on one line is kept; one more byte is not.
	exact := strings.Repeat("y", MaxBytes)
	if got := TruncateHead(exact, MaxLines, MaxBytes); got.Truncated {
		t.Errorf("51200 bytes truncated")
	}
	over := TruncateHead(exact+"y\nnext", MaxLines, MaxBytes)
	if !over.FirstLineExceedsLimit || over.Content != "" || over.OutputLines != 0 {
		t.Errorf("single long line: %+v", over)
	}
	tailOver := TruncateTail("start\n"+exact+"z", MaxLines, MaxBytes)
	if !tailOver.LastLinePartial || tailOver.OutputBytes != MaxBytes || !strings.HasSuffix(tailOver.Content, "yz") {
		t.Errorf("tail of a long line: %+v", tailOver)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int]string{0: "0B", 1023: "1023B", 1024: "1.0KB", MaxBytes: "50.0KB", 1536: "1.5KB", 3 * 1024 * 1024 / 2: "1.5MB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTruncateHeadLines(t *testing.T) {
	// A final empty line is a line here (unlike text ending in "\n" for TruncateHead).
	lines := []string{"a", "b", ""}
	got := TruncateHeadLines(lines, 2, 100)
	want := Truncation{Content: "a\nb", Truncated: true, By: TruncatedByLines, TotalLines: 3, TotalBytes: 4, OutputLines: 2, OutputBytes: 3, MaxLines: 2, MaxBytes: 100}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := TruncateHeadLines(lines, 3, 4); got.Truncated || got.Content != "a\nb\n" {
		t.Errorf("fits: %+v", got)
	}
	if got := TruncateHeadLines(nil, 3, 4); got.Truncated || got.Content != "" || got.TotalLines != 0 {
		t.Errorf("nil: %+v", got)
	}
	if got := TruncateHeadLines([]string{"toolong"}, 3, 4); !got.FirstLineExceedsLimit || got.Content != "" {
		t.Errorf("long first: %+v", got)
	}
}
