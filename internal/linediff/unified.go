package linediff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Unified returns the unified diff (see the package documentation) of old and the text the
// edits make of it, with context unchanged lines around each change, labelled oldLabel and
// newLabel; "" when the edits change nothing. The edits must be sorted by Start, within old
// and not overlapping, as [Lines] returns them; otherwise it is an error.
func Unified(oldLabel, newLabel, old string, edits []Edit, context int) (string, error) {
	if err := check(old, edits); err != nil {
		return "", err
	}
	off := lineOffsets(old)
	changes := lineChanges(old, off, edits)
	if len(changes) == 0 {
		return "", nil
	}
	context = max(context, 0)
	var b strings.Builder
	b.WriteString("--- " + oldLabel + "\n+++ " + newLabel + "\n")
	shift := 0 // new line index minus old line index after the changes written so far
	for i := 0; i < len(changes); {
		j := i
		for j+1 < len(changes) && changes[j+1].a0-changes[j].a1 <= 2*context {
			j++
		}
		shift = hunk(&b, old, off, changes[i:j+1], context, shift)
		i = j + 1
	}
	return b.String(), nil
}

// check says whether edits are a valid list over old.
func check(old string, edits []Edit) error {
	end := 0
	for i, e := range edits {
		if e.Start < end || e.End < e.Start || e.End > len(old) {
			return fmt.Errorf("edit %d replaces bytes %d to %d of a %d-byte text after an edit ending at %d: edits must lie within the text, sorted and not overlapping", i, e.Start, e.End, len(old), end)
		}
		end = e.End
	}
	return nil
}

// lineChange is a change of whole lines: old lines a0..a1 (end excluded) replaced by text.
type lineChange struct {
	a0, a1 int
	text   string
}

// lineChanges widens valid edits to the whole lines they touch, joins the ones that share a
// line or touch, and drops those that change nothing.
func lineChanges(old string, off []int, edits []Edit) []lineChange {
	var out []lineChange
	for i := 0; i < len(edits); {
		start := lineStart(old, edits[i].Start)
		var text strings.Builder
		text.WriteString(old[start:edits[i].Start])
		text.WriteString(edits[i].New)
		end := edits[i].End
		i++
		for {
			e, closed := lineEnd(old, end, text.String())
			if i < len(edits) && (edits[i].Start < e || !closed) {
				text.WriteString(old[end:edits[i].Start])
				text.WriteString(edits[i].New)
				end = edits[i].End
				i++
				continue
			}
			text.WriteString(old[end:e])
			end = e
			break
		}
		if t := text.String(); t != old[start:end] {
			c := lineChange{a0: sort.SearchInts(off, start), a1: sort.SearchInts(off, end), text: t}
			if n := len(out); n > 0 && out[n-1].a1 == c.a0 {
				out[n-1].a1, out[n-1].text = c.a1, out[n-1].text+c.text
			} else {
				out = append(out, c)
			}
		}
	}
	return out
}

// lineStart returns the offset of the start of the line holding offset i.
func lineStart(s string, i int) int { return strings.LastIndexByte(s[:i], '\n') + 1 }

// lineEnd returns where a change that replaces old[start:end] with text (text beginning at a
// line start) must end to cover whole lines, and whether the result is closed: true unless it
// ends at the end of old without a final newline on one side, where an insertion at the end
// of old would extend its last line.
func lineEnd(old string, end int, text string) (int, bool) {
	next := func(i int) int {
		if j := strings.IndexByte(old[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return len(old)
	}
	e := end
	if e > 0 && old[e-1] != '\n' {
		e = next(e)
	} else if text != "" && text[len(text)-1] != '\n' && e < len(old) {
		e = next(e)
	}
	if e < len(old) {
		return e, true
	}
	full := text + old[end:e]
	oldClosed := len(old) == 0 || old[len(old)-1] == '\n'
	return e, oldClosed && (full == "" || full[len(full)-1] == '\n')
}

// hunk writes one hunk holding changes (in order, their contexts touching) and returns shift
// after them.
func hunk(b *strings.Builder, old string, off []int, changes []lineChange, context, shift int) int {
	nOld := len(off) - 1
	h0, h1 := max(changes[0].a0-context, 0), min(changes[len(changes)-1].a1+context, nOld)
	oldCount, newCount := h1-h0, h1-h0
	for _, c := range changes {
		n := strings.Count(c.text, "\n")
		if c.text != "" && c.text[len(c.text)-1] != '\n' {
			n++
		}
		newCount += n - (c.a1 - c.a0)
	}
	b.WriteString("@@ -" + span(h0, oldCount) + " +" + span(h0+shift, newCount) + " @@\n")
	line := func(i int) string { return old[off[i]:off[i+1]] }
	pos := h0
	for _, c := range changes {
		for ; pos < c.a0; pos++ {
			writeLine(b, ' ', line(pos))
		}
		for ; pos < c.a1; pos++ {
			writeLine(b, '-', line(pos))
		}
		inserted := 0
		for t := c.text; t != ""; inserted++ {
			k := strings.IndexByte(t, '\n') + 1
			if k == 0 {
				k = len(t)
			}
			writeLine(b, '+', t[:k])
			t = t[k:]
		}
		shift += inserted - (c.a1 - c.a0)
	}
	for ; pos < h1; pos++ {
		writeLine(b, ' ', line(pos))
	}
	return shift
}

// span is a hunk header's range: the 1-based first line and the count, the count left out
// when it is 1, and an empty range named by the line before it.
func span(first0, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(first0) + ",0"
	case 1:
		return strconv.Itoa(first0 + 1)
	}
	return strconv.Itoa(first0+1) + "," + strconv.Itoa(count)
}

func writeLine(b *strings.Builder, mark byte, line string) {
	b.WriteByte(mark)
	b.WriteString(line)
	if line == "" || line[len(line)-1] != '\n' {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}
