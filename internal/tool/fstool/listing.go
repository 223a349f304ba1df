package fstool

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/tool"
)

// listing joins entries one a line, cut at [tool.MaxBytes], and appends the notices: the limit
// notice the caller computed (if any) and the byte-limit notice (if the output was cut). The
// truncation is returned only when it happened.
func listing(entries []string, limitNotice string) (string, *tool.Truncation) {
	tr := tool.TruncateHeadLines(entries, len(entries), tool.MaxBytes)
	text := tr.Content
	var notices []string
	if limitNotice != "" {
		notices = append(notices, limitNotice)
	}
	var cut *tool.Truncation
	if tr.Truncated {
		cut = &tr
		notices = append(notices, fmt.Sprintf("%s limit reached", tool.FormatSize(tool.MaxBytes)))
	}
	if len(notices) > 0 {
		text += "\n\n[" + strings.Join(notices, ". ") + "]"
	}
	return text, cut
}
