package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// artifactPath is the path of the run's artifact file name under .rein/runs/<id>/.
func artifactPath(t *testing.T, env Env, id, name string) string {
	t.Helper()
	return filepath.Join(projectOf(t, env, id), filepath.FromSlash(RunsDir), id, name)
}

// edit appends to a (read-only) artifact.
func edit(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\nedited\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// blockedWith checks that err is a *BlockedError holding a blocker of code whose detail holds
// every want, with recovery options.
func blockedWith(t *testing.T, what string, err error, code string, want ...string) {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("%s: err = %v, want a *BlockedError with %s", what, err, code)
	}
	for _, b := range be.Blockers {
		if b.Code != code || len(b.Recovery) == 0 {
			continue
		}
		for _, w := range want {
			if !strings.Contains(b.Detail, w) {
				t.Fatalf("%s: %s detail %q lacks %q", what, code, b.Detail, w)
			}
		}
		return
	}
	t.Fatalf("%s: blockers %+v, want %s", what, be.Blockers, code)
}

// wantEverywhere checks status, next and resume all report code.
func wantEverywhere(t *testing.T, env Env, id, code string, want ...string) {
	t.Helper()
	rep, err := Status(env, id)
	blockedWith(t, "status", err, code, want...)
	if rep == nil || rep.State != "blocked" || !slices.ContainsFunc(rep.Blockers, func(b Blocker) bool { return b.Code == code }) {
		t.Fatalf("status report = %+v, want state blocked with %s", rep, code)
	}
	_, err = Next(context.Background(), env, id)
	blockedWith(t, "next", err, code, want...)
	_, err = Resume(context.Background(), env, id)
	blockedWith(t, "resume", err, code, want...)
}

// wantRunning checks the run is no longer blocked.
func wantRunning(t *testing.T, env Env, id string) {
	t.Helper()
	if rep, err := Status(env, id); err != nil || rep.State != StateReady {
		t.Fatalf("status = %+v, %v; want running", rep, err)
	}
}

// TestTamperedArtifactsAreTypedBlockers edits, removes and replaces each kind of artifact the
// run ledger references; each is a typed blocker with recovery options at status, next and
// resume, naming the artifact, its path and digests — never an internal error.
func TestTamperedArtifactsAreTypedBlockers(t *testing.T) {
	t.Run("requirement", func(t *testing.T) {
		env, id := startRun(t)
		edit(t, artifactPath(t, env, id, "requirement.md"))
		wantEverywhere(t, env, id, BlockRequirementDrift, "requirement.md", "file digest")
	})
	t.Run("requirement-snapshot", func(t *testing.T) {
		env, id := startRun(t)
		os.Remove(artifactPath(t, env, id, "requirement-snapshot.md"))
		wantEverywhere(t, env, id, BlockRequirementDrift, "requirement-snapshot.md")
	})
	t.Run("execution-lock", func(t *testing.T) {
		env, id := startRun(t)
		edit(t, artifactPath(t, env, id, "execution-lock.md"))
		wantEverywhere(t, env, id, BlockLockTampered, "execution-lock.md", "file digest")
	})
	for _, how := range []string{"edited", "removed", "replaced"} {
		t.Run("preflight/"+how, func(t *testing.T) {
			env0, id := startRun(t)
			env := workflowEnv(env0.Home)
			p := artifactPath(t, env, id, "preflight.md")
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case "edited":
				edit(t, p)
			case "removed":
				os.Remove(p)
			case "replaced":
				os.Remove(p)
				write(t, p, strings.Replace(string(orig), "# Preflight", "# Preflight (checked)", 1))
			}
			want := []string{"artifact preflight", ".rein/runs/" + id + "/preflight.md", "recorded file digest sha256:"}
			if how == "removed" {
				want = append(want, "is missing")
			} else {
				want = append(want, "has file digest sha256:")
			}
			wantEverywhere(t, env, id, BlockArtifactTampered, want...)
			// Reported, never recorded: the restored artifact resolves it.
			os.Remove(p)
			if err := os.WriteFile(p, orig, 0o444); err != nil {
				t.Fatal(err)
			}
			wantRunning(t, env, id)
			if _, err := Next(context.Background(), env, id); err != nil {
				t.Fatalf("next after the restore: %v", err)
			}
		})
	}
	t.Run("research", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageSpecification, nil)
		edit(t, artifactPath(t, env, id, "research.md"))
		wantEverywhere(t, env, id, BlockStale, "research changed")
	})
	t.Run("research/accepted-not-completed", func(t *testing.T) {
		// An accepted attempt whose stage.completed a crash cut off is not yet in the graph:
		// its artifact is checked by its file digest.
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageSpecification, nil)
		dropRecords(t, env, id, func(rec ledger.Record) bool {
			return rec.Kind == KindStageCompleted && bytes.Contains(rec.Body, []byte(`"research"`)) ||
				rec.Kind == KindStageCompleted && bytes.Contains(rec.Body, []byte(`"clarification"`))
		})
		edit(t, artifactPath(t, env, id, "research.md"))
		wantEverywhere(t, env, id, BlockArtifactTampered, "artifact research", "research.md")
	})
	t.Run("clarification", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
			return script.Parse([]byte(clarifyScenario), "scenario.yaml")
		})
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatal(err)
		}
		if _, err := Clarify(env, id, map[string]string{"u1": "the blue one"}); err != nil {
			t.Fatal(err)
		}
		edit(t, artifactPath(t, env, id, "clarification.md"))
		wantEverywhere(t, env, id, BlockStale, "clarification changed")
	})
	t.Run("spec", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageSpecGate, nil)
		edit(t, artifactPath(t, env, id, "spec.md"))
		wantEverywhere(t, env, id, BlockStale, "spec changed")
		_, err := ApproveGate(env, id, GateSpec, artifact.Digest("sha256:"+strings.Repeat("0", 64)), "ana")
		blockedWith(t, "approve", err, BlockArtifactTampered, "spec.md", "file digest")
	})
	t.Run("spec-rejection", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageSpecGate, nil)
		if _, err := RejectGate(env, id, GateSpec, "too vague", "ana"); err != nil {
			t.Fatal(err)
		}
		// The rejected spec is no longer used: editing it blocks nothing.
		edit(t, artifactPath(t, env, id, "spec.md"))
		wantRunning(t, env, id)
		edit(t, artifactPath(t, env, id, "spec-rejection-1.md"))
		wantEverywhere(t, env, id, BlockArtifactTampered, "artifact spec-rejection", "spec-rejection-1.md")
	})
	t.Run("spec-approval", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageTicketPlanning, nil)
		edit(t, artifactPath(t, env, id, "spec.md"))
		wantEverywhere(t, env, id, BlockStale, "the spec gate's approval is changed")
	})
	t.Run("ticket-plan", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageTicketPlanGate, nil)
		os.Remove(artifactPath(t, env, id, "ticket-plan.md"))
		wantEverywhere(t, env, id, BlockStale, "ticket-plan changed (digest -")
	})
	t.Run("ticket-plan-rejection", func(t *testing.T) {
		env0, id := startRun(t)
		env := workflowEnv(env0.Home)
		advanceTo(t, env, id, StageTicketPlanGate, nil)
		if _, err := RejectGate(env, id, GateTicketPlan, "split it", "ana"); err != nil {
			t.Fatal(err)
		}
		os.Remove(artifactPath(t, env, id, "ticket-plan-rejection-1.md"))
		wantEverywhere(t, env, id, BlockArtifactTampered, "ticket-plan-rejection-1.md", "is missing")
	})
}

// dropRecords rewrites run id's ledger without the records drop selects, as a crash that cut
// them off would have left it (the chain is rebuilt record by record).
func dropRecords(t *testing.T, env Env, id string, drop func(ledger.Record) bool) {
	t.Helper()
	dir := runDir(env.Home, id)
	var keep []ledger.Record
	for rec, err := range mustReadLedger(t, dir) {
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, rec)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	var h ledger.Header
	for _, rec := range keep {
		if rec.Kind == ledger.KindHeader {
			if err := json.Unmarshal(rec.Body, &h); err != nil {
				t.Fatal(err)
			}
		}
	}
	l, err := ledger.Create(dir, h, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, rec := range keep {
		if rec.Kind == ledger.KindHeader || drop(rec) {
			continue
		}
		if _, err := l.Append(ledger.Entry{Kind: rec.Kind, Body: json.RawMessage(rec.Body)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStageSessionAnchors: each stage.attempt record anchors its stage session's head; a
// session ledger replaced by an older copy of itself, removed, replaced by another session's
// or corrupted is a typed blocker at status, next and resume.
func TestStageSessionAnchors(t *testing.T) {
	session := func(env Env, id, name string) string {
		return filepath.Join(env.Home, "runs", id, "stages", name, ledger.FileName)
	}
	for _, c := range []struct {
		name, code string
		want       []string
		change     func(t *testing.T, env Env, id string)
	}{
		{"rolled-back", BlockStageSessionRolledBack, []string{"research attempt 1's session", "was rolled back", "anchored seq"},
			func(t *testing.T, env Env, id string) {
				p := session(env, id, "research-1")
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
				if err := os.WriteFile(p, bytes.Join(lines[:len(lines)-2], nil), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{"removed", BlockStageSessionRolledBack, []string{"research attempt 1's session", "is gone"},
			func(t *testing.T, env Env, id string) {
				if err := os.RemoveAll(filepath.Dir(session(env, id, "research-1"))); err != nil {
					t.Fatal(err)
				}
			}},
		{"another-session", BlockStageSessionCorrupt, nil, // filled in per run below
			func(t *testing.T, env Env, id string) {
				data, err := os.ReadFile(session(env, id, "specification-1"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(session(env, id, "research-1"), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{"corrupt", BlockStageSessionCorrupt, []string{"does not verify", "corrupt at offset"},
			func(t *testing.T, env Env, id string) {
				flipLedgerByte(t, filepath.Dir(session(env, id, "research-1")))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env0, id := startRun(t)
			env := workflowEnv(env0.Home)
			advanceTo(t, env, id, StageSpecGate, nil)
			c.change(t, env, id)
			want := c.want
			if c.name == "another-session" {
				want = []string{"holds the ledger of session \"" + id + "-specification-1\""}
			}
			wantEverywhere(t, env, id, c.code, want...)
		})
	}
}
