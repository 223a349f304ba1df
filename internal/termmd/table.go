package termmd

import "strings"

// isDelimRow says whether line is a table's delimiter row: cells of dashes with optional
// colons (|---|:--:|--:|).
func isDelimRow(line string) bool {
	cells := splitRow(line)
	if len(cells) == 0 || !strings.Contains(line, "-") {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return strings.Contains(line, "|") || len(cells) > 1
}

// splitRow splits a table row into trimmed cells (\| is a pipe inside a cell).
func splitRow(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, "\\|") {
		t = t[:len(t)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

type align int

const (
	left align = iota
	center
	right
)

// table renders a header, a delimiter row and the rows under it (up to a blank line or a
// line without a pipe) as aligned columns; when they do not fit the width, as the source
// lines, cut to it.
func (r *renderer) table(lines []string, width int) ([]string, int) {
	n := 2
	for n < len(lines) && strings.TrimSpace(lines[n]) != "" && strings.Contains(lines[n], "|") {
		n++
	}
	grid, aligns := r.cells(lines[:n])
	if grid == nil {
		return r.paragraph(lines[:1], width, maxDepth)
	}
	cols := len(aligns)
	widths := make([]int, cols)
	for _, row := range grid {
		for c, cell := range row {
			widths[c] = max(widths[c], segsWidth(cell))
		}
	}
	total := 3 * (cols - 1)
	for _, w := range widths {
		total += w
	}
	if total > width {
		var rows []string
		for _, l := range lines[:n] {
			rows = append(rows, hardWrap(strings.TrimSpace(l), width)...)
		}
		return rows, n
	}
	sep := styled(r.th.Rule, " │ ")
	var rows []string
	for i, row := range grid {
		var b strings.Builder
		for c, cell := range row {
			if c > 0 {
				b.WriteString(sep)
			}
			b.WriteString(r.pad(cell, widths[c], aligns[c]))
		}
		rows = append(rows, strings.TrimRight(b.String(), " "))
		if i == 0 {
			parts := make([]string, cols)
			for c, w := range widths {
				parts[c] = strings.Repeat("─", w)
			}
			rows = append(rows, styled(r.th.Rule, strings.Join(parts, "─┼─")))
		}
	}
	return rows, n
}

// cells parses a table's header, delimiter row and rows into inline cells (the header's
// strong) and the columns' alignments; nil when the delimiter row has another number of
// cells than the header.
func (r *renderer) cells(lines []string) ([][][]seg, []align) {
	header := splitRow(lines[0])
	var aligns []align
	for _, c := range splitRow(lines[1]) {
		a := left
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
			a = center
		case strings.HasSuffix(c, ":"):
			a = right
		}
		aligns = append(aligns, a)
	}
	cols := len(header)
	if len(aligns) != cols {
		return nil, nil
	}
	grid := make([][][]seg, 0, len(lines)-1)
	for i, l := range append([]string{lines[0]}, lines[2:]...) {
		cells := splitRow(l)
		row := make([][]seg, cols)
		for c := range row {
			if c < len(cells) {
				base := style(0)
				if i == 0 {
					base = sStrong
				}
				row[c] = oneLine(inline(cells[c], base, r.th.Marks))
			}
		}
		grid = append(grid, row)
	}
	return grid, aligns
}

// oneLine turns hard breaks into spaces: a cell is one row.
func oneLine(segs []seg) []seg {
	for i := range segs {
		if segs[i].text == "\n" {
			segs[i].text = " "
		}
	}
	return segs
}

func segsWidth(segs []seg) int {
	w := 0
	for _, s := range segs {
		w += cellWidth(s.text)
	}
	return w
}

func (r *renderer) pad(cell []seg, width int, a align) string {
	var b strings.Builder
	for _, s := range cell {
		b.WriteString(r.th.apply(s.st, s.text))
	}
	gap := width - segsWidth(cell)
	switch a {
	case right:
		return strings.Repeat(" ", gap) + b.String()
	case center:
		return strings.Repeat(" ", gap/2) + b.String() + strings.Repeat(" ", gap-gap/2)
	}
	return b.String() + strings.Repeat(" ", gap)
}
