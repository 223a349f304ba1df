package gitx_test

import (
	"context"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/gitx"
)

func TestResolveAndAncestry(t *testing.T) {
	ctx := context.Background()
	g, _ := newRepo(t)
	commit(t, g, map[string]string{"a.txt": "a\n"})
	first, _ := g.Head(ctx)
	commit(t, g, map[string]string{"a.txt": "b\n"})
	second, _ := g.Head(ctx)
	if id, ok, err := g.ResolveCommit(ctx, "main"); id != second || !ok || err != nil {
		t.Errorf("ResolveCommit(main) = %s, %v, %v; want %s", id, ok, err, second)
	}
	tree, _ := g.Output(ctx, "rev-parse", "HEAD^{tree}")
	for _, rev := range []string{"nope", "--all", tree, "refs/heads/other"} {
		if id, ok, err := g.ResolveCommit(ctx, rev); ok || err != nil {
			t.Errorf("ResolveCommit(%q) = %s, %v, %v; want not found", rev, id, ok, err)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{first, second, true}, {second, first, false}, {second, second, true}} {
		if got, err := g.IsAncestor(ctx, c.a, c.b); got != c.want || err != nil {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	if _, err := g.IsAncestor(ctx, "nope", second); err == nil {
		t.Error("IsAncestor of an unknown commit: no error")
	}
	if got := gitx.SplitNUL([]byte("a\x00b c\x00\x00d\x00")); !slices.Equal(got, []string{"a", "b c", "", "d"}) {
		t.Errorf("SplitNUL = %q", got)
	}
	if got := gitx.SplitNUL(nil); got != nil {
		t.Errorf("SplitNUL(nil) = %q", got)
	}
}
