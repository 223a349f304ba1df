package run

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// fileState is a file's bytes and modification time.
type fileState struct {
	data  string
	mtime time.Time
}

// snapshotRun reads every file of run id: under $REIN_HOME/runs/ID and PROJECT/.rein/runs/ID.
func snapshotRun(t *testing.T, env Env, id string) map[string]fileState {
	t.Helper()
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	files := map[string]fileState{}
	for _, root := range []string{runDir(env.Home, id), filepath.Join(r.Project, ".rein", "runs", id)} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			st := fileState{mtime: info.ModTime()}
			if !d.IsDir() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				st.data = string(data)
			}
			files[p] = st
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 4 {
		t.Fatalf("run %s has %d files: the snapshot misses the run's directories", id, len(files))
	}
	return files
}

func sameFiles(t *testing.T, what string, before, after map[string]fileState) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(after)) {
		b, ok := before[p]
		if !ok {
			t.Errorf("%s created %s", what, p)
		} else if b != after[p] {
			t.Errorf("%s changed %s", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed %s", what, p)
		}
	}
}

func kinds(t *testing.T, env Env, id string) []string {
	t.Helper()
	l, _, err := ledger.OpenReadOnly(runDir(env.Home, id), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var ks []string
	for rec, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, rec.Kind)
	}
	return ks
}

func TestStatusWritesNothing(t *testing.T) {
	env, id := startRun(t)
	before := snapshotRun(t, env, id)
	if _, err := Status(env, id); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "status", before, snapshotRun(t, env, id))

	other := env
	other.Harness.BinaryDigest = "sha256:" + strings.Repeat("b", 64)
	wantBlocker(t, other, id, BlockHarnessDrift)
	sameFiles(t, "status from another binary", before, snapshotRun(t, env, id))
	if rep, err := Status(env, id); err != nil || rep.State != StateReady {
		t.Fatalf("status from the locked binary after another's = %+v, %v; want running", rep, err)
	}
}

// TestEnvDriftLifts: a harness upgrade and a different workflow are recorded by another
// harness's next and lifted (recorded) by the locked one.
func TestEnvDriftLifts(t *testing.T) {
	for code, drift := range map[string]func(*Env){
		BlockHarnessDrift:  func(e *Env) { e.Harness.BinaryDigest = "sha256:" + strings.Repeat("b", 64) },
		BlockWorkflowDrift: func(e *Env) { e.Workflow.Version = 2 },
	} {
		t.Run(code, func(t *testing.T) {
			env, id := startRun(t)
			other := env
			drift(&other)
			if _, err := Next(context.Background(), other, id); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), code) {
				t.Fatalf("next from another harness = %v; want %s", err, code)
			}
			if ks := kinds(t, env, id); ks[len(ks)-1] != KindBlocked {
				t.Fatalf("ledger ends with %s; want the recorded drift", ks[len(ks)-1])
			}
			if code == BlockHarnessDrift {
				if _, err := Next(context.Background(), other, id); err == nil || !strings.Contains(err.Error(), env.Harness.BinaryDigest) {
					t.Fatalf("harness drift = %v; want the recovery naming the locked binary's digest", err)
				}
			}
			r, l, err := openRun(env.Home, id)
			if err != nil {
				t.Fatal(err)
			}
			err = r.reconcileAndRecord(env, l)
			l.Close()
			if err != nil {
				t.Fatalf("the locked harness reconciling = %v; want the drift lifted", err)
			}
			if ks := kinds(t, env, id); ks[len(ks)-1] != KindBlockerLifted {
				t.Fatalf("ledger ends with %s; want %s", ks[len(ks)-1], KindBlockerLifted)
			}
			if rep, err := Status(env, id); err != nil || len(rep.Blockers) != 0 {
				t.Fatalf("status = %+v, %v; want no blocker", rep, err)
			}
		})
	}
}

// TestOtherBlockersStay: a recorded blocker reconciliation cannot re-check stays.
func TestOtherBlockersStay(t *testing.T) {
	env, id := startRun(t)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	b := Blocker{Code: BlockPreflight, Stage: r.Stage, Detail: "required verification command go does not resolve", Recovery: []string{"install go"}}
	if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), BlockPreflight) {
		t.Fatalf("next = %v; want the recorded %s", err, BlockPreflight)
	}
	if ks := kinds(t, env, id); slices.Contains(ks, KindBlockerLifted) {
		t.Fatalf("ledger %v lifts a blocker that cannot be re-checked", ks)
	}
	wantBlocker(t, env, id, BlockPreflight)
}

func TestGuidanceDriftLifts(t *testing.T) {
	env, id := startRun(t)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	agents := filepath.Join(r.Project, "AGENTS.md")
	write(t, agents, "# other rules\n")
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) {
		t.Fatalf("next = %v, want blocked", err)
	}
	write(t, agents, "# rules\n")
	before := snapshotRun(t, env, id)
	if rep, err := Status(env, id); err != nil || len(rep.Blockers) != 0 || rep.State != StateReady {
		t.Fatalf("status after the revert = %+v, %v; want no blocker", rep, err)
	}
	sameFiles(t, "status", before, snapshotRun(t, env, id))
	r, l, err = openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	err = r.reconcileAndRecord(env, l)
	l.Close()
	if err != nil || len(r.Blockers) != 0 {
		t.Fatalf("reconcile after the revert = %v (blockers %+v)", err, r.Blockers)
	}
	data, err := os.ReadFile(filepath.Join(runDir(env.Home, id), ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kind":"`+KindBlockerLifted+`"`) || !strings.Contains(string(data), "guidance:AGENTS.md") ||
		!strings.Contains(string(data), "equal to the locked one") {
		t.Fatalf("the ledger records no lift of the guidance drift with its evidence")
	}
}
