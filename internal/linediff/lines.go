package linediff

import "math"

// Edit replaces old[Start:End] (byte offsets into the old text) with New.
type Edit struct {
	Start, End int
	New        string
}

// Lines returns the edits turning old into new, each covering whole lines (see the package
// documentation for the algorithm and its bound); nil when the texts are equal.
func Lines(old, new string) []Edit { return lines(old, new, 0) }

// lines is [Lines] with the search limit L (0: the one the package documentation gives).
func lines(old, new string, limit int) []Edit {
	if old == new {
		return nil
	}
	ao, bo := lineOffsets(old), lineOffsets(new)
	// The common first and last lines are set aside before the lines are numbered.
	na, nb := len(ao)-1, len(bo)-1
	p := 0
	for p < na && p < nb && old[ao[p]:ao[p+1]] == new[bo[p]:bo[p+1]] {
		p++
	}
	q := 0
	for q < na-p && q < nb-p && old[ao[na-q-1]:ao[na-q]] == new[bo[nb-q-1]:bo[nb-q]] {
		q++
	}
	ao, bo = ao[p:len(ao)-q], bo[p:len(bo)-q]
	a, b := lineIDs(old, ao, new, bo)
	d := differ{a: a, b: b, limit: limit}
	d.diff(0, len(a), 0, len(b))
	edits := make([]Edit, len(d.blocks))
	for i, c := range d.blocks {
		edits[i] = Edit{Start: ao[c.a0], End: ao[c.a1], New: new[bo[c.b0]:bo[c.b1]]}
	}
	return edits
}

// lineOffsets returns the byte offset of the start of each line of s, then len(s): line i is
// s[off[i]:off[i+1]], and there are len(off)-1 lines.
func lineOffsets(s string) []int {
	off := make([]int, 1, 64)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			off = append(off, i+1)
		}
	}
	if off[len(off)-1] != len(s) {
		off = append(off, len(s))
	}
	return off
}

// lineIDs numbers the lines of both texts so that equal lines get equal numbers.
func lineIDs(old string, ao []int, new string, bo []int) (a, b []int32) {
	seen := make(map[string]int32, len(ao))
	number := func(s string, off []int) []int32 {
		ids := make([]int32, len(off)-1)
		for i := range ids {
			line := s[off[i]:off[i+1]]
			id, ok := seen[line]
			if !ok {
				id = int32(len(seen))
				seen[line] = id
			}
			ids[i] = id
		}
		return ids
	}
	return number(old, ao), number(new, bo)
}

// block is one change: old lines a0..a1 replaced by new lines b0..b1 (indexes, ends excluded).
type block struct{ a0, a1, b0, b1 int }

// differ runs the Myers search over a and b, collecting the changes in order in blocks.
type differ struct {
	a, b   []int32
	limit  int   // L: the most steps a search takes from each end
	vf, vb []int // the furthest x reached on each diagonal, forward and backward
	blocks []block
}

// emit records a change, joined to the previous one when they touch.
func (d *differ) emit(a0, a1, b0, b1 int) {
	if a0 == a1 && b0 == b1 {
		return
	}
	if n := len(d.blocks); n > 0 && d.blocks[n-1].a1 == a0 && d.blocks[n-1].b1 == b0 {
		d.blocks[n-1].a1, d.blocks[n-1].b1 = a1, b1
		return
	}
	d.blocks = append(d.blocks, block{a0, a1, b0, b1})
}

// diff collects the changes turning a[a0:a1] into b[b0:b1].
func (d *differ) diff(a0, a1, b0, b1 int) {
	for {
		for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
			a0, b0 = a0+1, b0+1
		}
		for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
			a1, b1 = a1-1, b1-1
		}
		if a0 == a1 || b0 == b1 {
			d.emit(a0, a1, b0, b1)
			return
		}
		if d.limit == 0 {
			d.limit = min(max((1<<23)/(a1-a0+b1-b0), 64), 1024)
		}
		if d.vf == nil {
			d.vf, d.vb = make([]int, 2*d.limit+3), make([]int, 2*d.limit+3)
		}
		x1, y1, x2, y2 := d.split(a0, a1, b0, b1)
		if (x1 == a0 && y1 == b0 && x2 == x1) || (x2 == a1 && y2 == b1 && x1 == x2) {
			// No progress (cannot happen with a correct search): give the part as one change.
			d.emit(a0, a1, b0, b1)
			return
		}
		d.diff(a0, x1, b0, y1)
		a0, b0 = x2, y2 // the snake x1,y1 → x2,y2 is unchanged; go on with the rest
	}
}

const unreachedB = math.MaxInt // a backward diagonal not reached yet (forward uses -1)

// split returns the middle snake (x1,y1) → (x2,y2) of a[a0:a1] against b[b0:b1], in absolute
// indexes: a run of equal lines on a shortest edit path. The part must have changes at both
// ends (no common first or last line). A search that takes d.limit steps from each end
// without meeting returns, as an empty snake, the point reached that covers the most lines.
func (d *differ) split(a0, a1, b0, b1 int) (x1, y1, x2, y2 int) {
	n, m := a1-a0, b1-b0
	delta := n - m
	odd := delta&1 != 0
	off := d.limit + 1
	vf, vb := d.vf, d.vb
	for s := 0; s <= d.limit; s++ {
		// Forward: vf[k+off] is the furthest x on diagonal k = x - y after s steps from (0,0).
		for k := -s; k <= s; k += 2 {
			x := -1
			if s == 0 {
				x = 0
			} else {
				if k < s {
					if v := vf[k+1+off]; v >= 0 && v-k <= m {
						x = v // down: one inserted line
					}
				}
				if k > -s {
					if v := vf[k-1+off]; v >= 0 && v < n && v+1 > x {
						x = v + 1 // right: one deleted line
					}
				}
			}
			if x < 0 {
				vf[k+off] = -1
				continue
			}
			xs := x
			for x < n && x-k < m && d.a[a0+x] == d.b[b0+x-k] {
				x++
			}
			vf[k+off] = x
			if j := k - delta; odd && j >= -(s-1) && j <= s-1 {
				if u := vb[j+off]; u != unreachedB && u <= x {
					return a0 + xs, b0 + xs - k, a0 + x, b0 + x - k
				}
			}
		}
		// Backward: vb[j+off] is the smallest x on diagonal k = delta + j after s steps from (n,m).
		for j := -s; j <= s; j += 2 {
			k := delta + j
			x := unreachedB
			if s == 0 {
				x = n
			} else {
				if j > -s {
					if u := vb[j-1+off]; u != unreachedB && u-k >= 0 {
						x = u // up: one inserted line
					}
				}
				if j < s {
					if u := vb[j+1+off]; u != unreachedB && u > 0 && u-1 < x {
						x = u - 1 // left: one deleted line
					}
				}
			}
			if x == unreachedB {
				vb[j+off] = unreachedB
				continue
			}
			xe := x
			for x > 0 && x-k > 0 && d.a[a0+x-1] == d.b[b0+x-k-1] {
				x--
			}
			vb[j+off] = x
			if !odd && k >= -s && k <= s {
				if v := vf[k+off]; v >= 0 && v >= x {
					return a0 + x, b0 + x - k, a0 + xe, b0 + xe - k
				}
			}
		}
	}
	return d.furthest(a0, b0, n, m)
}

// furthest returns, as an empty snake, the point the last forward or backward search step
// reached that leaves the fewest lines to diff.
func (d *differ) furthest(a0, b0, n, m int) (x1, y1, x2, y2 int) {
	s, off, delta := d.limit, d.limit+1, n-m
	bestF, fx, fk := -1, 0, 0
	bestB, bx, bk := -1, 0, 0
	for k := -s; k <= s; k += 2 {
		if x := d.vf[k+off]; x >= 0 && 2*x-k > bestF {
			bestF, fx, fk = 2*x-k, x, k
		}
		if x := d.vb[k+off]; x != unreachedB && n+m-(2*x-delta-k) > bestB {
			bestB, bx, bk = n+m-(2*x-delta-k), x, delta+k
		}
	}
	if bestF >= bestB {
		return a0 + fx, b0 + fx - fk, a0 + fx, b0 + fx - fk
	}
	return a0 + bx, b0 + bx - bk, a0 + bx, b0 + bx - bk
}
