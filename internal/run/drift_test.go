package run

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startRun starts a run in a fresh git repository and returns the environment and run id.
func startRun(t *testing.T) (Env, string) {
	t.Helper()
	return startRunWith(t, nil)
}

// startRunWith is startRun with the drafted profile edited by edit (nil: as drafted).
func startRunWith(t *testing.T, edit func(*Profile)) (Env, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/x\n")
	write(t, filepath.Join(root, "AGENTS.md"), "# rules\n")
	write(t, filepath.Join(root, "req.md"), "# Do a thing\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i"}} {
		if _, err := git(root, args...); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(p)
	}
	data, _ := p.Marshal()
	write(t, filepath.Join(root, ProfilePath), string(data))
	if _, err := Approve(root, "ana", time.Now()); err != nil {
		t.Fatal(err)
	}
	env := Env{Home: t.TempDir(), Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, Workflow: DeliveryWorkflow()}
	env.Agents = testAgents(env.Home, nil)
	id, err := Start(env, StartOptions{Project: root, Requirement: filepath.Join(root, "req.md")})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Status(env, id); err != nil || rep.State != StateReady || rep.Stage != StageResearch {
		t.Fatalf("status = %+v, %v", rep, err)
	}
	return env, id
}

func wantBlocker(t *testing.T, env Env, id, code string) {
	t.Helper()
	rep, err := Status(env, id)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("status err = %v, want ErrBlocked", err)
	}
	for _, b := range rep.Blockers {
		if b.Code == code && len(b.Recovery) > 0 {
			return
		}
	}
	t.Fatalf("blockers = %+v, want %s", rep.Blockers, code)
}

func TestHarnessDrift(t *testing.T) {
	env, id := startRun(t)
	env.Harness.BinaryDigest = "sha256:" + strings.Repeat("b", 64)
	wantBlocker(t, env, id, BlockHarnessDrift)
}

func TestWorkflowDrift(t *testing.T) {
	env, id := startRun(t)
	env.Workflow.Version = 2
	wantBlocker(t, env, id, BlockWorkflowDrift)
}

func TestLockTampered(t *testing.T) {
	env, id := startRun(t)
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	ref, _ := r.ref(ArtLock)
	p := filepath.Join(r.Project, filepath.FromSlash(ref.Path))
	if err := exec.Command("chmod", "u+w", p).Run(); err != nil {
		t.Fatal(err)
	}
	write(t, p, "---\nid: x\n---\n# forged\n")
	wantBlocker(t, env, id, BlockLockTampered)
}
