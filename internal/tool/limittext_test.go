package tool

import (
	"strconv"
	"testing"
)

// TestLimitTexts fails when a limit's text in the tools' descriptions no longer says the limit.
func TestLimitTexts(t *testing.T) {
	if got := strconv.Itoa(MaxLines); got != MaxLinesText {
		t.Errorf("MaxLinesText = %q, MaxLines is %s", MaxLinesText, got)
	}
	if got := FormatSize(MaxBytes); got != MaxBytesText {
		t.Errorf("MaxBytesText = %q, FormatSize(MaxBytes) is %s", MaxBytesText, got)
	}
}
