package run

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/gitx/gitxtest"
)

// git runs git in dir through gitx (tests build their repositories with it).
func git(dir string, args ...string) (string, error) {
	return gitx.Runner{Dir: dir}.Output(context.Background(), args...)
}

// TestHostileRepository: starting a run in a repository whose own configuration names
// commands (fsmonitor, hooks, filters, diff drivers…) runs none of them, and Preflight still
// reads the repository.
func TestHostileRepository(t *testing.T) {
	h := gitxtest.NewHostile(t)
	root, err := ProjectRoot(filepath.Join(h.Dir, "src"))
	if want, _ := filepath.EvalSymlinks(h.Dir); err != nil || root != want {
		t.Fatalf("ProjectRoot = %q, %v; want %q", root, err, want)
	}
	h.AssertNothingRan(t, "ProjectRoot")

	pf := Preflight(root, Lock{}, Snapshot{Branch: "rein/x", Summary: "x"})
	h.AssertNothingRan(t, "Preflight")
	for _, want := range []Check{{"git-clean", "ok", "tracked files are clean"}, {"branch", "ok", "rein/x can be created"}} {
		if !slices.Contains(pf.Checks, want) {
			t.Errorf("preflight checks %+v lack %+v", pf.Checks, want)
		}
	}

	write(t, filepath.Join(root, "req.md"), "# Do a thing\n")
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := p.Marshal()
	write(t, filepath.Join(root, ProfilePath), string(data))
	if _, err := Approve(root, "ana", time.Now()); err != nil {
		t.Fatal(err)
	}
	env := Env{Home: t.TempDir(), Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, Workflow: DeliveryWorkflow()}
	id, err := Start(env, StartOptions{Project: root, Requirement: filepath.Join(root, "req.md")})
	h.AssertNothingRan(t, "Start")
	if err != nil {
		t.Fatal(err)
	}
	head, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(RunsDir), id, ArtSnapshot+".md"))
	if err != nil || !strings.Contains(string(snap), "git:"+head) {
		t.Errorf("the requirement snapshot does not name git:%s (%v):\n%s", head, err, snap)
	}
}
