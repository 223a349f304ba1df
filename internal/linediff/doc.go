// Package linediff is rein's line diff: the edit script between two texts, line by line, and
// its unified-diff rendering. It imports only the standard library and does nothing at package
// load.
//
// # Edits
//
// An [Edit] replaces the bytes old[Start:End] of the old text with New. A list of edits is
// sorted by Start and does not overlap (an edit starts at or after the previous one's End).
//
// [Lines] returns the edits turning old into new. Lines are split after each '\n' (a "\r\n"
// ending stays part of its line, so lines differing only in their ending differ), and a last
// line without '\n' is a line of its own. Every edit [Lines] returns covers whole lines: Start
// is the start of a line of old, End the start of a line or len(old), New whole lines of new.
// Identical texts give no edits.
//
// # Algorithm and its bound
//
// After the common first and last lines are set aside, lines are compared as small integers
// (one map lookup per line) by Myers' O(ND) algorithm in its linear-space form: the middle
// snake of each part is found searching from both ends, and the parts on either side are
// diffed the same way. The result is minimal (the fewest deleted plus inserted lines) as long
// as no search needs more than L steps from each end, which holds whenever a part has at most
// 2L changed lines; L = 2^23 / (lines of both texts), kept between 64 and 1024, so texts of up
// to 4096 lines each are diffed minimally with up to 2048 changed lines. A search that reaches
// L steps without meeting the other end splits its part at the point reached that covers the
// most lines and goes on with the rest: the diff stays correct (applied to old it gives new)
// but may change more lines than the minimum. The work is thereby about (N+M)·L line
// comparisons, never quadratic in the size of the texts, and the memory O(N+M).
//
// # Unified diffs
//
// [Unified] renders old and a list of edits over it (from [Lines], or any other valid list)
// in the standard unified format: a "--- old" and a "+++ new" line, then hunks headed
// "@@ -l,c +l,c @@", where a count of 1 is left out and an empty side is written "l,0" with l
// the line before it (0 at the start, as GNU diff does). Each hunk has the given number of
// unchanged lines of context on either side; two changes whose contexts touch (at most
// 2×context unchanged lines apart) share a hunk. Within a hunk a change shows its deleted lines
// ("-") before its inserted ones ("+"); a line without a final newline is followed by
// "\ No newline at end of file". An edit that does not cover whole lines is widened to the
// lines it touches (edits sharing a line are joined); edits that change nothing render
// nothing, and no change at all is the empty string.
package linediff
