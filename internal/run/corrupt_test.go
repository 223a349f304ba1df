package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// flipLedgerByte flips one byte in the middle of the second record of the ledger in dir (a
// record that is neither the header nor the last one, so it cannot pass for a torn tail).
func flipLedgerByte(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, ledger.FileName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) < 4 {
		t.Fatalf("ledger %s has %d lines", p, len(lines))
	}
	off := len(lines[0]) + len(lines[1])/2
	data[off] ^= 0x01
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptRunLedgerIsReported: one flipped byte in a run ledger makes status, next,
// resume, abort and the gates name the run and the corruption (offset, seq), never "no such
// run"; the latest-run lookup reports the corrupt newest run instead of skipping it.
func TestCorruptRunLedgerIsReported(t *testing.T) {
	env, id := startRun(t)
	project := projectOf(t, env, id)
	flipLedgerByte(t, runDir(env.Home, id))
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ledger.ErrCorrupt) || errors.Is(err, ErrNoRun) {
			t.Fatalf("%s: err = %v, want ErrCorrupt and not ErrNoRun", what, err)
		}
		var ce *ledger.CorruptError
		if !errors.As(err, &ce) || ce.Seq != 2 {
			t.Fatalf("%s: err = %v, want a *CorruptError at seq 2", what, err)
		}
		for _, want := range []string{"run " + id, "offset", "seq 2"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %q does not name %q", what, err, want)
			}
		}
	}
	_, err := Status(env, id)
	check("status", err)
	_, err = Next(context.Background(), env, id)
	check("next", err)
	_, err = Resume(context.Background(), env, id)
	check("resume", err)
	check("abort", Abort(env, id, "x"))
	_, err = ApproveGate(env, id, GateSpec, artifact.Digest("sha256:"+strings.Repeat("0", 64)), "ana")
	check("approve", err)
	r, err := os.ReadFile(filepath.Join(runDir(env.Home, id), ledger.FileName))
	if err != nil || !bytes.Contains(r, []byte(`"run.started"`)) {
		t.Fatalf("the corrupt ledger was changed: %v", err)
	}

	_, err = Latest(env.Home, project)
	check("latest", err)
}

// TestLatestSkipsNoCorruptNewerRun: an older valid run does not hide a newer corrupt one, and
// a newer valid run is found beside an older corrupt one.
func TestLatestSkipsNoCorruptNewerRun(t *testing.T) {
	env, older := startRun(t)
	project := projectOf(t, env, older)
	newer, err := Start(env, StartOptions{Project: project, Requirement: filepath.Join(project, "req.md")})
	if err != nil {
		t.Fatal(err)
	}
	flipLedgerByte(t, runDir(env.Home, newer))
	if _, err := Latest(env.Home, project); !errors.Is(err, ledger.ErrCorrupt) || !strings.Contains(err.Error(), newer) {
		t.Fatalf("latest = %v, want the corrupt newer run %s reported", err, newer)
	}
	newest, err := Start(env, StartOptions{Project: project, Requirement: filepath.Join(project, "req.md")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Latest(env.Home, project); err != nil || got != newest {
		t.Fatalf("latest = %s, %v; want %s", got, err, newest)
	}
}

// TestRunLedgerOfAnotherRun: a run ledger copied into another run's directory is refused:
// its header names the other run.
func TestRunLedgerOfAnotherRun(t *testing.T) {
	env, a := startRun(t)
	project := projectOf(t, env, a)
	b, err := Start(env, StartOptions{Project: project, Requirement: filepath.Join(project, "req.md")})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(runDir(env.Home, a), ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir(env.Home, b), ledger.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Status(env, b)
	if !errors.Is(err, ledger.ErrCorrupt) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), "run "+b) {
		t.Fatalf("status = %v, want ErrCorrupt naming %s and %s", err, a, b)
	}
	if _, err := Latest(env.Home, project); !errors.Is(err, ledger.ErrCorrupt) {
		t.Fatalf("latest = %v, want ErrCorrupt", err)
	}
}

// projectOf is the project of run id.
func projectOf(t *testing.T, env Env, id string) string {
	t.Helper()
	l, _, err := ledger.OpenReadOnly(runDir(env.Home, id), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Header().Bindings["project"]
}
