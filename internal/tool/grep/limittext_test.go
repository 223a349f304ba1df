package grep

import (
	"strconv"
	"testing"
)

// TestLimitTexts fails when a limit's text in the tool's description no longer says the limit.
func TestLimitTexts(t *testing.T) {
	if got := strconv.Itoa(DefaultLimit); got != defaultLimitText {
		t.Errorf("defaultLimitText = %q, DefaultLimit is %s", defaultLimitText, got)
	}
	if got := strconv.Itoa(MaxLineChars); got != maxLineCharsText {
		t.Errorf("maxLineCharsText = %q, MaxLineChars is %s", maxLineCharsText, got)
	}
}
