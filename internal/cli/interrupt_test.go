package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/cli"
)

// TestInterruptIsRecordedBeforeTheRunStops cancels a run while its bash tool runs: rein exits
// 130, the cancellation is in the ledger before the tool's result, and the session verifies.
func TestInterruptIsRecordedBeforeTheRunStops(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(dir, "home")
	t.Setenv("REIN_HOME", home)
	scenario := "version: 1\nturns:\n  - calls: [{name: bash, id: b1, args: {command: \"touch started; sleep 30\"}}]\n  - text: never\n"
	if err := os.WriteFile("s.yaml", []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for { // wait until the tool runs; the test asserts what happens, not how fast
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"--script", "s.yaml", "-p", "go"}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr: %s", code, cli.ExitInterrupted, stderr.String())
	}
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("found %d session ledgers", len(ledgers))
	}
	data, _ := os.ReadFile(ledgers[0])
	text := string(data)
	cancelAt := strings.Index(text, `"kind":"cancel"`)
	resultAt := strings.Index(text, `"toolCallId":"b1"`)
	if cancelAt < 0 || resultAt < 0 || cancelAt > resultAt {
		t.Errorf("the cancel record (at %d) must precede the tool's result (at %d):\n%s", cancelAt, resultAt, text)
	}
	stdout.Reset()
	stderr.Reset()
	if code := cli.Main(context.Background(), []string{"session", "verify", filepath.Dir(ledgers[0])}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("verify after interrupt: exit %d: %s", code, stderr.String())
	}
}
