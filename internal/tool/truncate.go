package tool

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Output limits shared by the built-in tools: a result keeps at most MaxLines lines and
// MaxBytes bytes, whichever limit is reached first.
const (
	MaxLines = 2000
	MaxBytes = 50 * 1024
	// MaxLinesText and MaxBytesText are MaxLines and FormatSize(MaxBytes) as the tools'
	// descriptions show them: constants, so a description is built without formatting
	// (TestLimitTexts keeps them equal).
	MaxLinesText = "2000"
	MaxBytesText = "50.0KB"
)

// TruncatedBy names the limit that cut an output.
type TruncatedBy string

const (
	TruncatedByLines TruncatedBy = "lines"
	TruncatedByBytes TruncatedBy = "bytes"
)

// Truncation is the outcome of [TruncateHead] or [TruncateTail]: the kept text and the counts
// a tool needs to write its notice. It is meant to be placed in [Result.Details] as is; the
// kept text itself is not serialized.
//
// Lines are separated by "\n". A single final "\n" ends the last line rather than starting an
// empty one, so "a\nb\n" has two lines, "" has none and "\n" has one (empty) line.
type Truncation struct {
	// Content is the kept text.
	Content string `json:"-"`
	// Truncated reports whether anything was dropped.
	Truncated bool `json:"truncated"`
	// By is the limit that was hit first; empty when nothing was dropped.
	By TruncatedBy `json:"truncatedBy,omitempty"`
	// TotalLines and TotalBytes count the input.
	TotalLines int `json:"totalLines"`
	TotalBytes int `json:"totalBytes"`
	// OutputLines counts the lines of Content (a partial line counts as one); OutputBytes is
	// len(Content).
	OutputLines int `json:"outputLines"`
	OutputBytes int `json:"outputBytes"`
	// LastLinePartial (tail only) reports that the last line alone was longer than the byte
	// limit and Content holds only its end.
	LastLinePartial bool `json:"lastLinePartial"`
	// FirstLineExceedsLimit (head only) reports that the first line alone was longer than the
	// byte limit; Content is then empty, since head truncation never cuts a line.
	FirstLineExceedsLimit bool `json:"firstLineExceedsLimit"`
	// MaxLines and MaxBytes are the limits that were applied.
	MaxLines int `json:"maxLines"`
	MaxBytes int `json:"maxBytes"`
}

// splitBody splits text into lines under the rule documented on [Truncation]; it reports
// whether text ended with a newline that terminated its last line.
func splitBody(text string) (lines []string, body string, finalNL bool) {
	if text == "" {
		return nil, "", false
	}
	body, finalNL = strings.CutSuffix(text, "\n")
	return strings.Split(body, "\n"), body, finalNL
}

// fits reports whether text is within the limits as is. The final newline, if any, is not
// counted against maxBytes.
func fits(lines []string, body string, maxLines, maxBytes int) bool {
	return len(lines) <= maxLines && len(body) <= maxBytes
}

// TruncateHead keeps the beginning of text: as many whole lines as fit in maxLines lines and
// maxBytes bytes (counting the newlines between them). It never cuts a line: when the first
// line alone is longer than maxBytes, Content is empty and FirstLineExceedsLimit is set. A
// truncated Content has no final newline. Limits below 1 are treated as 1.
func TruncateHead(text string, maxLines, maxBytes int) Truncation {
	maxLines, maxBytes = max(maxLines, 1), max(maxBytes, 1)
	lines, body, _ := splitBody(text)
	if fits(lines, body, maxLines, maxBytes) {
		return Truncation{Content: text, TotalLines: len(lines), TotalBytes: len(text),
			OutputLines: len(lines), OutputBytes: len(text), MaxLines: maxLines, MaxBytes: maxBytes}
	}
	t := TruncateHeadLines(lines, maxLines, maxBytes)
	t.TotalBytes = len(text)
	return t
}

// TruncateHeadLines is [TruncateHead] for text already split into lines (without their
// newlines), for callers whose line boundaries are known, such as a range of a file. Content
// is the kept lines joined by "\n"; TotalBytes counts the lines and the newlines between them.
func TruncateHeadLines(lines []string, maxLines, maxBytes int) Truncation {
	maxLines, maxBytes = max(maxLines, 1), max(maxBytes, 1)
	t := Truncation{TotalLines: len(lines), MaxLines: maxLines, MaxBytes: maxBytes}
	for i, line := range lines {
		t.TotalBytes += len(line)
		if i > 0 {
			t.TotalBytes++
		}
	}
	used, kept := 0, 0
	for i, line := range lines {
		if kept == maxLines {
			t.By = TruncatedByLines
			break
		}
		cost := len(line)
		if i > 0 {
			cost++
		}
		if used+cost > maxBytes {
			t.By = TruncatedByBytes
			t.FirstLineExceedsLimit = kept == 0
			break
		}
		used += cost
		kept++
	}
	t.Truncated = t.By != ""
	t.Content = strings.Join(lines[:kept], "\n")
	t.OutputLines, t.OutputBytes = kept, used
	return t
}

// TruncateTail keeps the end of text: as many whole lines as fit in maxLines lines and
// maxBytes bytes. When the last line alone is longer than maxBytes, Content holds its last
// maxBytes bytes (moved forward to a UTF-8 boundary) and LastLinePartial is set. A final newline
// in text is kept and not counted against maxBytes. Limits below 1 are treated as 1.
func TruncateTail(text string, maxLines, maxBytes int) Truncation {
	maxLines, maxBytes = max(maxLines, 1), max(maxBytes, 1)
	lines, body, finalNL := splitBody(text)
	t := Truncation{TotalLines: len(lines), TotalBytes: len(text), MaxLines: maxLines, MaxBytes: maxBytes}
	if fits(lines, body, maxLines, maxBytes) {
		t.Content, t.OutputLines, t.OutputBytes = text, len(lines), len(text)
		return t
	}
	t.Truncated = true
	used, kept := 0, 0
	for i := len(lines) - 1; i >= 0; i-- {
		if kept == maxLines {
			t.By = TruncatedByLines
			break
		}
		line := lines[i]
		cost := len(line)
		if kept > 0 {
			cost++
		}
		if used+cost > maxBytes {
			t.By = TruncatedByBytes
			if kept == 0 {
				start := len(line) - maxBytes
				for start < len(line) && !utf8.RuneStart(line[start]) {
					start++
				}
				used, kept = len(line)-start, 1
				t.LastLinePartial = true
			}
			break
		}
		used += cost
		kept++
	}
	t.Content = body[len(body)-used:]
	if finalNL {
		t.Content += "\n"
	}
	t.OutputLines, t.OutputBytes = kept, len(t.Content)
	return t
}

// FormatSize renders a byte count the way truncation notices do: "512B", "50.0KB", "1.5MB".
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}
