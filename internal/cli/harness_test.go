package cli

import (
	"context"
	"os"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

// TestRunEnvHarnessDigest: the streamed digest rein run records for its own binary equals the
// digest of the binary's bytes read whole, as it was computed before.
func TestRunEnvHarnessDigest(t *testing.T) {
	t.Setenv("REIN_HOME", t.TempDir())
	e := &env{ctx: context.Background(), getenv: os.Getenv}
	got, err := runEnv(e)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(artifact.Sum(data)); got.Harness.BinaryDigest != want {
		t.Errorf("harness digest %s, want %s", got.Harness.BinaryDigest, want)
	}
}
