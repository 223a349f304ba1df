package proc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTerminalNotControlling: a Spec.Terminal that is not rein's controlling terminal (here
// a plain file) hands nothing over; the process runs as without it. The hand-over itself is
// exercised on a real terminal by internal/cli's TestUIInTmux (an editor that sets the
// terminal's modes and reads from it).
func TestTerminalNotControlling(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "not-a-tty"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ran"}, Stdin: f, Stdout: f, Terminal: f})
	if res.Outcome != Exited || res.Code != 0 {
		t.Fatalf("the run ended %s", res)
	}
	if data, _ := os.ReadFile(f.Name()); string(data) != "ran\n" {
		t.Errorf("output %q", data)
	}
}
