package cli

import "testing"

func TestWithinOneEdit(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"session", "session", true},
		{"sesion", "session", true},   // deletion
		{"sessions", "session", true}, // insertion
		{"sessoin", "session", true},  // transposition
		{"sesxion", "session", true},  // substitution
		{"esssion", "session", true},  // transposition at the start
		{"sessino", "session", true},  // transposition at the end
		{"", "a", true},
		{"sesoin", "session", false}, // two edits
		{"sesin", "session", false},
		{"run", "nur", false},
		{"ab", "ba", true},
		{"abc", "bca", false},
		{"contxt", "context", true},
		{"fix", "run", false},
		{"é", "e", true},
		{"éa", "aé", true},
	} {
		if got := withinOneEdit(c.a, c.b); got != c.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := withinOneEdit(c.b, c.a); got != c.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
