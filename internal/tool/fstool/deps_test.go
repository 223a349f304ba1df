package fstool_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the file tools free of the shell parser and the sandbox: they need
// only the protected-path matcher (internal/pathrule), not the permission engine that
// analyses bash lines (internal/policy) or the command runner.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/reinhq/rein/internal/tool/fstool").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave only %d packages: %q", len(deps), deps)
	}
	for _, dep := range deps {
		for _, banned := range []string{"mvdan.cc/sh", "github.com/reinhq/rein/internal/sandbox", "github.com/reinhq/rein/internal/policy"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("fstool depends on %s", dep)
			}
		}
	}
}
