package gitx_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestLog(t *testing.T) {
	ctx := context.Background()
	g, _ := newRepo(t)
	commit(t, g, map[string]string{"a.txt": "a\n"})
	base, _ := g.Head(ctx)
	commit(t, g, map[string]string{"a.txt": "b\n"})
	second, _ := g.Head(ctx)
	if _, err := g.Run(ctx, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "third\n\nRein-Ticket: t1\nRein-Ticket: t2"); err != nil {
		t.Fatal(err)
	}
	third, _ := g.Head(ctx)
	cs, err := g.Log(ctx, false, third, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].ID != second || cs[1].ID != third || !slices.Equal(cs[1].Parents, []string{second}) {
		t.Fatalf("Log = %+v", cs)
	}
	if cs[1].Author != "t <t@e>" || !strings.HasPrefix(cs[1].Message, "third\n") || cs[1].Trailer("Rein-Ticket") != "t2" || cs[0].Trailer("Rein-Ticket") != "" {
		t.Errorf("commit = %+v", cs[1])
	}
	if cs, err := g.Log(ctx, true, base); err != nil || len(cs) != 1 || cs[0].Parents != nil {
		t.Errorf("Log(base) = %+v, %v", cs, err)
	}
	for _, bad := range []string{"HEAD", "--all", strings.Repeat("g", 40)} {
		if _, err := g.Log(ctx, false, bad); err == nil {
			t.Errorf("Log(%q) succeeded", bad)
		}
		if _, err := g.Log(ctx, false, third, bad); err == nil {
			t.Errorf("Log(.., ^%q) succeeded", bad)
		}
	}
}
