package artifact_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the package a leaf of the governance layer: no kernel, session,
// provider, tool, CLI or composition package may be linked in.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/reinhq/rein/internal/artifact").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"kernel", "session", "llm", "tool", "cli", "system", "contextpack"} {
			p := "github.com/reinhq/rein/internal/" + banned
			if dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("artifact depends on %s", dep)
			}
		}
	}
}
