package linediff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// apply applies edits (sorted, not overlapping) to old.
func apply(t *testing.T, old string, edits []Edit) string {
	t.Helper()
	var b strings.Builder
	prev := 0
	for _, e := range edits {
		if e.Start < prev || e.End < e.Start || e.End > len(old) {
			t.Fatalf("invalid edit %+v after %d in a %d-byte text", e, prev, len(old))
		}
		b.WriteString(old[prev:e.Start])
		b.WriteString(e.New)
		prev = e.End
	}
	b.WriteString(old[prev:])
	return b.String()
}

// randomText returns up to n lines drawn from k distinct ones, some ending in CRLF, the last
// one sometimes without a newline.
func randomText(r *rand.Rand, n, k int) string {
	var b strings.Builder
	lines := r.IntN(n + 1)
	for i := range lines {
		fmt.Fprintf(&b, "l%d", r.IntN(k))
		switch {
		case i == lines-1 && r.IntN(4) == 0:
		case r.IntN(8) == 0:
			b.WriteString("\r\n")
		default:
			b.WriteString("\n")
		}
	}
	return b.String()
}

// mutate returns s with some lines changed, deleted and inserted.
func mutate(r *rand.Rand, s string, k int) string {
	lines := splitKeep(s)
	var out []string
	for _, l := range lines {
		switch r.IntN(6) {
		case 0: // deleted
		case 1:
			out = append(out, fmt.Sprintf("n%d\n", r.IntN(k)))
		case 2:
			out = append(out, l, fmt.Sprintf("i%d\n", r.IntN(k)))
		default:
			out = append(out, l)
		}
	}
	if len(out) > 0 && r.IntN(5) == 0 {
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
	}
	return strings.Join(out, "")
}

// checkDiff asserts that Lines(old, new) and its unified diffs give new back.
func checkDiff(t *testing.T, old, new string, limit int) []Edit {
	t.Helper()
	edits := lines(old, new, limit)
	if got := apply(t, old, edits); got != new {
		t.Fatalf("edits of %q → %q give %q", old, new, got)
	}
	for _, e := range edits {
		if e.Start > 0 && old[e.Start-1] != '\n' || e.End < len(old) && e.End > 0 && old[e.End-1] != '\n' {
			t.Fatalf("edit %+v of %q does not cover whole lines", e, old)
		}
	}
	for _, c := range []int{0, 1, 3, 4} {
		u, err := Unified("a", "b", old, edits, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := applyUnified(old, u)
		if err != nil || got != new {
			t.Fatalf("context %d: the diff of %q → %q applies as %q, %v:\n%s", c, old, new, got, err, u)
		}
		if (u == "") != (old == new) {
			t.Fatalf("context %d: diff of %q → %q is %q", c, old, new, u)
		}
	}
	return edits
}

func TestRandomPairsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		old := randomText(r, 30, 6)
		new := mutate(r, old, 6)
		if r.IntN(10) == 0 {
			new = randomText(r, 30, 6)
		}
		checkDiff(t, old, new, 0)
	}
}

// TestBoundedSearchStaysCorrect runs the searches with a tiny limit, so most of them stop
// early and split at the furthest point: the diffs must still be correct.
func TestBoundedSearchStaysCorrect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		old := randomText(r, 60, 4)
		checkDiff(t, old, randomText(r, 60, 4), 1+r.IntN(3))
		checkDiff(t, old, mutate(r, old, 4), 1+r.IntN(3))
	}
}

// TestLargeInputWithManyDifferences diffs two texts of 40,000 unrelated lines each (the
// minimal diff has tens of thousands of changed lines, far past the search limit).
func TestLargeInputWithManyDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var a, b strings.Builder
	for range 40000 {
		fmt.Fprintf(&a, "%d\n", r.IntN(50))
		fmt.Fprintf(&b, "%d\n", r.IntN(50))
	}
	edits := checkDiff(t, a.String(), b.String(), 0)
	if len(edits) < 100 {
		t.Errorf("%d edits: the lines the texts share were not found", len(edits))
	}
}

// lcs is the length of the longest common subsequence of the lines of a and b, by the
// textbook dynamic program.
func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

func TestMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		old, new := randomText(r, 12, 3), randomText(r, 12, 3)
		if r.IntN(2) == 0 {
			new = mutate(r, old, 3)
		}
		edits := checkDiff(t, old, new, 0)
		changed := 0
		for _, e := range edits {
			changed += len(splitKeep(old[e.Start:e.End])) + len(splitKeep(e.New))
		}
		a, b := splitKeep(old), splitKeep(new)
		if want := len(a) + len(b) - 2*lcs(a, b); changed != want {
			t.Fatalf("%q → %q: %d lines changed, the minimum is %d: %+v", old, new, changed, want, edits)
		}
	}
}

func TestUnifiedCases(t *testing.T) {
	twelve := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	for _, c := range []struct {
		name, old, new string
		context        int
		want           string
	}{
		{"identical", "a\nb\n", "a\nb\n", 3, ""},
		{"both empty", "", "", 3, ""},
		{"empty old", "", "a\nb\n", 3, "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"empty new", "a\nb\n", "", 3, "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"one line each", "a\n", "b\n", 3, "@@ -1 +1 @@\n-a\n+b\n"},
		{"no newline on old", "a\nb", "a\nb\n", 3, "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"no newline on new", "a\nb\n", "a\nb", 3, "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{"no newline on either", "a\nb", "a\nc", 3, "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"unchanged last line without newline", "a\nb\nc", "A\nb\nc", 3, "@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n"},
		{"CRLF kept", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", 1, "@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"},
		{"line ending only", "a\nb\n", "a\r\nb\n", 1, "@@ -1,2 +1,2 @@\n-a\n+a\r\n b\n"},
		{"first line", twelve, "one\n" + twelve[2:], 2, "@@ -1,3 +1,3 @@\n-1\n+one\n 2\n 3\n"},
		{"last line", twelve, twelve[:len(twelve)-3] + "twelve\n", 2, "@@ -10,3 +10,3 @@\n 10\n 11\n-12\n+twelve\n"},
		{"insertion mid-file without context", "a\nb\n", "a\nx\ny\nb\n", 0, "@@ -1,0 +2,2 @@\n+x\n+y\n"},
		{"deletion mid-file without context", "a\nx\nb\n", "a\nb\n", 0, "@@ -2 +1,0 @@\n-x\n"},
		{"deletion shifts the next hunk", "a\nb\nc\nd\ne\nf\ng\n", "b\nc\nd\ne\nf\nG\nH\n", 1,
			"@@ -1,2 +1 @@\n-a\n b\n@@ -6,2 +5,3 @@\n f\n-g\n+G\n+H\n"},
		// Changes at lines 3 and 10 with 6 unchanged lines between: 2×3 context lines touch.
		{"hunks merge at 2×context", twelve, strings.Replace(strings.Replace(twelve, "3\n", "C\n", 1), "10\n", "X\n", 1), 3,
			"@@ -1,12 +1,12 @@\n 1\n 2\n-3\n+C\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+X\n 11\n 12\n"},
		// Lines 2 and 10, 7 unchanged between: one more than 2×3, two hunks.
		{"hunks apart past 2×context", twelve, strings.Replace(strings.Replace(twelve, "2\n", "B\n", 1), "10\n", "X\n", 1), 3,
			"@@ -1,5 +1,5 @@\n 1\n-2\n+B\n 3\n 4\n 5\n@@ -7,6 +7,6 @@\n 7\n 8\n 9\n-10\n+X\n 11\n 12\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Unified("old", "new", c.old, Lines(c.old, c.new), c.context)
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" {
				c.want = "--- old\n+++ new\n" + c.want
			}
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if back, err := applyUnified(c.old, got); err != nil || back != c.new {
				t.Errorf("the diff applies as %q, %v", back, err)
			}
		})
	}
}

// TestUnifiedWidensEdits gives Unified byte edits that do not cover whole lines (as the edit
// tool's matches may): the diff shows the whole lines they touch and applies to the new text.
func TestUnifiedWidensEdits(t *testing.T) {
	u, err := Unified("f", "f", "a\nb\nc\n", []Edit{{Start: 2, End: 4, New: "B"}}, 1)
	if want := "--- f\n+++ f\n@@ -1,3 +1,2 @@\n a\n-b\n-c\n+Bc\n"; err != nil || u != want {
		t.Errorf("got %q, %v; want %q", u, err, want)
	}
	u, err = Unified("f", "f", "a\nb", []Edit{{Start: 3, End: 3, New: "c\n"}, {Start: 3, End: 3, New: "d"}}, 1)
	if want := "--- f\n+++ f\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+bc\n+d\n\\ No newline at end of file\n"; err != nil || u != want {
		t.Errorf("got %q, %v; want %q", u, err, want)
	}
	if u, err := Unified("f", "f", "a\nb\n", []Edit{{Start: 0, End: 1, New: "a"}, {Start: 2, End: 2}}, 3); u != "" || err != nil {
		t.Errorf("edits that change nothing give %q, %v", u, err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		old := randomText(r, 10, 3)
		var edits []Edit
		for at := 0; at <= len(old); {
			start := at + r.IntN(len(old)-at+1)
			end := start + r.IntN(min(len(old)-start, 4)+1)
			edits = append(edits, Edit{Start: start, End: end, New: []string{"", "x", "y\n", "\nz", "l1\n"}[r.IntN(5)]})
			at = end + r.IntN(3)
			if r.IntN(3) == 0 {
				break
			}
		}
		new := apply(t, old, edits)
		u, err := Unified("a", "b", old, edits, r.IntN(3))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := applyUnified(old, u); err != nil || got != new {
			t.Fatalf("edits %+v of %q: the diff applies as %q, %v; want %q:\n%s", edits, old, got, err, new, u)
		}
	}
}

func TestUnifiedRefusesInvalidEdits(t *testing.T) {
	for _, edits := range [][]Edit{
		{{Start: 0, End: 9}},
		{{Start: 2, End: 1}},
		{{Start: 2, End: 4}, {Start: 3, End: 4}},
		{{Start: -1, End: 0}},
	} {
		if u, err := Unified("a", "b", "a\nb\nc\n", edits, 3); err == nil {
			t.Errorf("edits %+v of a 6-byte text: %q, no error", edits, u)
		}
	}
}

// BenchmarkTypicalEdit diffs a 2000-line file against itself with three regions changed and
// renders the unified diff, as `rein run diff` and the edit tool do.
func BenchmarkTypicalEdit(b *testing.B) {
	var old strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&old, "\tline %d of the file: x := f(%d)\n", i, i*7)
	}
	new := strings.Replace(old.String(), "line 100 of", "line one hundred of", 1)
	new = strings.Replace(new, "\tline 900 of the file: x := f(6300)\n", "", 1)
	new = strings.Replace(new, "\tline 1500 of", "\tinserted\n\tline 1500 of", 1)
	b.ReportAllocs()
	for b.Loop() {
		if u, err := Unified("f", "f", old.String(), Lines(old.String(), new), 4); err != nil || u == "" {
			b.Fatal(u, err)
		}
	}
}
