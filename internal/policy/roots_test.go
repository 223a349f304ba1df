package policy

import "testing"

// TestRoots: in an additional directory the deny and ask rules and the relative protected
// paths match the path relative to it; allow rules match only by absolute path.
func TestRoots(t *testing.T) {
	p, err := New(Config{Dir: "/ws", Roots: []string{"/extra"}, Rules: Rules{
		Deny: []string{"write(**/.env)"}, Ask: []string{"write(docs/**)"}, Allow: []string{"write(src/**)", "write(/extra/ok/**)"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want Verdict
	}{
		{"/extra/a/.env", Deny},
		{"/extra/docs/x.md", Ask},
		{"/extra/.git/config", Deny},
		{"/extra/src/main.go", NoMatch},
		{"/extra/ok/file", Allow},
		{"/elsewhere/.envrc", NoMatch},
		{"src/main.go", Allow},
	} {
		if d := p.DecidePath(OpWrite, tc.path); d.Verdict != tc.want {
			t.Errorf("%s: %v, want %v (%s)", tc.path, d.Verdict, tc.want, d.Reason)
		}
	}
	if _, err := New(Config{Dir: "/ws", Roots: []string{"rel"}}); err == nil {
		t.Error("a relative root was accepted")
	}
}
