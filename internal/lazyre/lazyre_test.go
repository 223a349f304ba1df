package lazyre

import "testing"

var (
	bad = Regexp{Expr: `(`}
	ok  = Regexp{Expr: `^a(b+)$`}
)

func TestCompiledOnFirstUse(t *testing.T) {
	if ok.re != nil {
		t.Fatal("compiled before its first use")
	}
	if !ok.MatchString("abb") || ok.MatchString("ac") {
		t.Fatal("MatchString")
	}
	if m := ok.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("FindStringSubmatch = %q", m)
	}
	if got := ok.ReplaceAllString("abb", "x"); got != "x" {
		t.Fatalf("ReplaceAllString = %q", got)
	}
	if first := ok.Compiled(); ok.Compiled() != first {
		t.Fatal("compiled twice")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic on first use")
		}
	}()
	bad.MatchString("")
}
