package run

import (
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

func TestAbsentIsTheSumOfAbsent(t *testing.T) {
	if got := artifact.Sum([]byte("absent")); got != absent {
		t.Fatalf("absent is %s, artifact.Sum(\"absent\") %s", absent, got)
	}
}
