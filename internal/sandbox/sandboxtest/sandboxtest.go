// Package sandboxtest helps tests that need a real bubblewrap sandbox.
//
// Locally, a missing bwrap skips the test with a message naming the package to install. In
// CI (the environment variable CI is "true") it fails the test instead: .ci/run installs
// bubblewrap, so the sandbox is always tested for real there.
package sandboxtest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
)

// New builds a sandbox for cfg and checks that it works, skipping or failing the test as
// the package documentation says when bwrap is not installed.
func New(t testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(cfg)
	if err == nil {
		err = s.Check(context.Background())
	}
	if err != nil {
		if errors.Is(err, sandbox.ErrUnavailable) && os.Getenv("CI") != "true" {
			t.Skipf("skipping a sandbox test: %v (install the %s package to run it; CI runs it)", err, sandbox.Package)
		}
		t.Fatalf("sandbox: %v", err)
	}
	return s
}
