package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/worktree"
)

var ctx = context.Background()

// project is a repository with one commit on main (go.mod, a.txt, .gitignore ignoring
// *.log), its checkout on main, and HOME pointed at an empty directory so that no
// configuration of the machine running the test applies.
type project struct {
	t    *testing.T
	dir  string
	git  gitx.Runner
	repo *worktree.Repo
	base string // main's commit
	home string // $REIN_HOME/worktrees/<run> stand-in
}

func newProject(t *testing.T) *project {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	p := &project{t: t, dir: filepath.Join(t.TempDir(), "project"), home: filepath.Join(t.TempDir(), "worktrees", "run-1")}
	p.git = gitx.Runner{Dir: p.dir}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p.run("init", "-q", "-b", "main")
	p.base = p.commit(p.git, map[string]string{"a.txt": "one\ntwo\nthree\n", ".gitignore": "*.log\n"}, "init")
	repo, err := worktree.OpenRepo(ctx, p.dir)
	if err != nil {
		t.Fatal(err)
	}
	p.repo = repo
	return p
}

func (p *project) run(args ...string) string {
	p.t.Helper()
	out, err := p.git.Output(ctx, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// commit writes files (an empty content deletes) in g's work tree and commits them as a
// person would; it returns the new HEAD.
func (p *project) commit(g gitx.Runner, files map[string]string, msg string) string {
	p.t.Helper()
	write(p.t, g.Dir, files)
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgSign=false", "commit", "-q", "-m", msg}} {
		if _, err := g.Run(ctx, args...); err != nil {
			p.t.Fatal(err)
		}
	}
	h, err := g.Head(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	return h
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ticket creates the ticket worktree of id from the delivery branch at base.
func (p *project) ticket(id, branch, base string) *worktree.Worktree {
	p.t.Helper()
	w, err := p.repo.Create(ctx, filepath.Join(p.home, id), branch, base)
	if err != nil {
		p.t.Fatal(err)
	}
	return w
}

// freeze writes files in w and freezes them as attempt 1 of ticket id.
func (p *project) freeze(w *worktree.Worktree, id string, files map[string]string) worktree.Frozen {
	p.t.Helper()
	write(p.t, w.Dir, files)
	f, err := w.Freeze(ctx, worktree.FreezeSpec{Run: "run-1", Ticket: id, Attempt: "1", Parent: w.Base})
	if err != nil {
		p.t.Fatal(err)
	}
	return f
}

// state is what a checkout looks like: its HEAD and its status.
func state(t *testing.T, dir string) string {
	t.Helper()
	g := gitx.Runner{Dir: dir}
	h, err := g.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Output(ctx, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		t.Fatal(err)
	}
	return h + "\n" + st
}

func wantCode(t *testing.T, err error, c worktree.Code) *worktree.Error {
	t.Helper()
	e, ok := errors.AsType[*worktree.Error](err)
	if !ok || e.Code != c || !errors.Is(err, &worktree.Error{Code: c}) {
		t.Fatalf("err = %v, want %s", err, c)
	}
	return e
}

func commitCount(t *testing.T, g gitx.Runner) int {
	t.Helper()
	out, err := g.Output(ctx, "rev-list", "--all", "--count")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range out {
		n = n*10 + int(c-'0')
	}
	return n
}
