package fstool

import (
	"strconv"
	"testing"
)

// TestLimitTexts fails when a limit's text in the tools' descriptions no longer says the limit.
func TestLimitTexts(t *testing.T) {
	if got := strconv.Itoa(DefaultLsLimit); got != defaultLsLimitText {
		t.Errorf("defaultLsLimitText = %q, DefaultLsLimit is %s", defaultLsLimitText, got)
	}
	if got := strconv.Itoa(DefaultFindLimit); got != defaultFindLimitText {
		t.Errorf("defaultFindLimitText = %q, DefaultFindLimit is %s", defaultFindLimitText, got)
	}
}
