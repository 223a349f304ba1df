package lazyre

import "testing"

func TestCompiledOnFirstUse(t *testing.T) {
	bad := New(`(`)
	ok := New(`^a(b+)$`)
	if !ok.MatchString("abb") || ok.MatchString("ac") {
		t.Fatal("MatchString")
	}
	if m := ok.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("FindStringSubmatch = %q", m)
	}
	if got := ok.ReplaceAllString("abb", "x"); got != "x" {
		t.Fatalf("ReplaceAllString = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic on first use")
		}
	}()
	bad.MatchString("")
}
