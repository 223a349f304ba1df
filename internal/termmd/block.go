package termmd

import (
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of quotes and lists; deeper markers are shown as text.
const maxDepth = 16

// Render lays markdown out in rows of at most width cells (at least 1).
func Render(src string, width int, th Theme) []string {
	width = max(width, 1)
	if strings.IndexByte(src, '\t') >= 0 {
		src = strings.ReplaceAll(src, "\t", "    ")
	}
	src = strings.ReplaceAll(src, "\r\n", "\n")
	r := &renderer{th: &th}
	rows := r.blocks(strings.Split(src, "\n"), width, false, 0)
	for i, row := range rows {
		rows[i] = fit(row, width)
	}
	return rows
}

type renderer struct{ th *Theme }

// kind is the sort of block a line starts.
type kind int

const (
	kPara kind = iota
	kBlank
	kFence
	kHeading
	kRule
	kQuote
	kItem
	kTable
)

// start says which block lines[i] starts (tables need the line after it).
func start(lines []string, i, depth int) kind {
	t, ind := trimIndent(lines[i])
	switch {
	case t == "":
		return kBlank
	case ind >= 4:
		return kPara
	case fenceOf(t) != "":
		return kFence
	case headingLevel(t) > 0:
		return kHeading
	case isRule(t):
		return kRule
	case t[0] == '>' && depth < maxDepth:
		return kQuote
	case depth < maxDepth && itemOf(lines[i]).content >= 0:
		return kItem
	case i+1 < len(lines) && strings.Contains(t, "|") && isDelimRow(lines[i+1]):
		return kTable
	}
	return kPara
}

// blocks renders lines as a sequence of blocks, a blank row between two unless tight
// (items of one list are never apart).
func (r *renderer) blocks(lines []string, width int, tight bool, depth int) []string {
	var out []string
	prev := kBlank
	number := 0 // the next number of an ordered list in progress, 0 if none
	ordered := false
	for i := 0; i < len(lines); {
		k := start(lines, i, depth)
		if k == kBlank {
			i++
			continue
		}
		var rows []string
		n := 1
		switch k {
		case kFence:
			rows, n = r.fence(lines[i:], width)
		case kHeading:
			rows = r.heading(lines[i], width)
		case kRule:
			rows = []string{styled(r.th.Rule, strings.Repeat("─", width))}
		case kQuote:
			rows, n = r.quote(lines[i:], width, depth)
		case kItem:
			o := itemOf(lines[i]).ordered
			if prev == kItem && o != ordered {
				prev, number = kPara, 0 // a list of the other kind starts
			}
			ordered = o
			rows, n, number = r.item(lines[i:], width, depth, number, prev == kItem)
		case kTable:
			rows, n = r.table(lines[i:], width)
		default:
			rows, n = r.paragraph(lines[i:], width, depth)
		}
		if k != kItem {
			number = 0
		}
		if len(out) > 0 && !tight && !(k == kItem && prev == kItem) {
			out = append(out, "")
		}
		out = append(out, rows...)
		prev = k
		i += n
	}
	return out
}

func trimIndent(line string) (string, int) {
	t := strings.TrimLeft(line, " ")
	return t, len(line) - len(t)
}

// paragraph joins lines up to a blank line or the start of another block; a line of = or -
// under it makes it a heading.
func (r *renderer) paragraph(lines []string, width, depth int) ([]string, int) {
	var b strings.Builder
	n := 0
	level := 0
	for n < len(lines) {
		if n > 0 {
			if l := setext(lines[n]); l > 0 && leading(lines[n]) < 4 {
				level = l
				n++
				break
			}
			if start(lines, n, depth) != kPara {
				break
			}
		}
		t, _ := trimIndent(lines[n])
		if n > 0 {
			if prev := b.String(); strings.HasSuffix(prev, "\\") {
				b.Reset()
				b.WriteString(prev[:len(prev)-1])
				b.WriteString("\n")
			} else if strings.HasSuffix(lines[n-1], "  ") {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(strings.TrimRight(t, " "))
		n++
	}
	if level > 0 {
		return r.headingRows(level, b.String(), width), n
	}
	return wrap(inline(b.String(), 0, r.th.Marks), width, r.th), n
}

// setext is 1 for a line of =, 2 for a line of -, else 0.
func setext(line string) int {
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		return 0
	case strings.Trim(t, "=") == "":
		return 1
	case strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

func headingLevel(t string) int {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ') {
		return 0
	}
	return n
}

func (r *renderer) heading(line string, width int) []string {
	t, _ := trimIndent(line)
	level := headingLevel(t)
	text := strings.TrimSpace(t[level:])
	if c := strings.TrimRight(text, "#"); c == "" || strings.HasSuffix(c, " ") {
		text = strings.TrimSpace(c)
	}
	return r.headingRows(level, text, width)
}

// headingRows keeps the level's hashes: they say the level without colour.
func (r *renderer) headingRows(level int, text string, width int) []string {
	segs := append([]seg{{strings.Repeat("#", level) + " ", sHeading}}, inline(text, sHeading, r.th.Marks)...)
	return wrap(segs, width, r.th)
}

func isRule(t string) bool {
	c := t[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case c:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// fenceOf is the fence a line opens (``` or ~~~, three or more), "" if none.
func fenceOf(t string) string {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// fence renders a fenced code block as written, indented two cells, each line cut (not
// reflowed) to the width; an unclosed fence runs to the end.
func (r *renderer) fence(lines []string, width int) ([]string, int) {
	open, ind := trimIndent(lines[0])
	f := fenceOf(open)
	var rows []string
	n := 1
	closed := false
	for ; n < len(lines) && !closed; n++ {
		t, in := trimIndent(lines[n])
		if in < 4 && strings.HasPrefix(t, f) && strings.Trim(t, string(f[0])+" ") == "" {
			closed = true
			continue
		}
		line := lines[n]
		line = line[min(ind, len(line)-len(strings.TrimLeft(line, " "))):]
		for _, h := range hardWrap(strings.TrimRight(line, " "), width-2) {
			rows = append(rows, strings.TrimRight("  "+styled(r.th.CodeBlock, h), " "))
		}
	}
	for !closed && len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1] // an unclosed fence at the end: the answer's last newlines
	}
	return rows, n
}

// quote renders the lines marked with > (and the lazy lines continuing their paragraph)
// behind a bar.
func (r *renderer) quote(lines []string, width, depth int) ([]string, int) {
	var inner []string
	n := 0
	for ; n < len(lines); n++ {
		t, ind := trimIndent(lines[n])
		if ind < 4 && strings.HasPrefix(t, ">") {
			t = strings.TrimPrefix(t[1:], " ")
			inner = append(inner, t)
			continue
		}
		if t == "" || len(inner) == 0 || strings.TrimSpace(inner[len(inner)-1]) == "" || start(lines, n, depth) != kPara {
			break
		}
		inner = append(inner, lines[n])
	}
	rows := r.blocks(inner, max(width-2, 1), false, depth+1)
	bar := styled(r.th.Quote, "│")
	for i, row := range rows {
		if row == "" {
			rows[i] = bar
		} else {
			rows[i] = bar + " " + row
		}
	}
	return rows, n
}

// listItem is what a list marker line says.
type listItem struct {
	ordered bool
	number  int
	// content is the column the item's text starts at, -1 for no marker.
	content int
	text    string
}

func itemOf(line string) listItem {
	t, ind := trimIndent(line)
	no := listItem{content: -1}
	if ind >= 4 || t == "" {
		return no
	}
	m := 0
	it := listItem{}
	switch {
	case t[0] == '-' || t[0] == '*' || t[0] == '+':
		m = 1
	default:
		for m < len(t) && m < 9 && t[m] >= '0' && t[m] <= '9' {
			m++
		}
		if m == 0 || m >= len(t) || (t[m] != '.' && t[m] != ')') {
			return no
		}
		it.ordered = true
		it.number, _ = strconv.Atoi(t[:m])
		m++
	}
	rest := t[m:]
	if rest != "" && rest[0] != ' ' {
		return no
	}
	body := strings.TrimLeft(rest, " ")
	sp := len(rest) - len(body)
	if body == "" || sp > 4 {
		sp = min(sp, 1)
	}
	it.content, it.text = ind+m+sp, body
	return it
}

// item renders one list item: its first line and every line indented to its content (or
// continuing its paragraph lazily), laid out as blocks behind the marker.
func (r *renderer) item(lines []string, width, depth, number int, continues bool) ([]string, int, int) {
	it := itemOf(lines[0])
	inner := []string{it.text}
	n := 1
	for ; n < len(lines); n++ {
		t, ind := trimIndent(lines[n])
		if t == "" {
			j := n
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j == len(lines) || leading(lines[j]) < it.content {
				break
			}
			inner = append(inner, "")
			continue
		}
		if ind >= it.content {
			inner = append(inner, lines[n][it.content:])
			continue
		}
		last := inner[len(inner)-1]
		if strings.TrimSpace(last) == "" || start(lines, n, depth) != kPara {
			break
		}
		inner = append(inner, t) // lazy continuation
	}
	marker := "•"
	next := 0
	if it.ordered {
		if !continues || number == 0 {
			number = it.number
		}
		marker, next = strconv.Itoa(number)+".", number+1
	}
	mw := cellWidth(marker) + 1
	tight := true
	for _, l := range inner {
		if strings.TrimSpace(l) == "" {
			tight = false
		}
	}
	rows := r.blocks(inner, max(width-mw, 1), tight, depth+1)
	if len(rows) == 0 {
		rows = []string{""}
	}
	pad := strings.Repeat(" ", mw)
	for i, row := range rows {
		p := pad
		if i == 0 {
			p = styled(r.th.Marker, marker) + " "
		}
		rows[i] = strings.TrimRight(p+row, " ")
	}
	return rows, n, next
}

func leading(line string) int {
	_, ind := trimIndent(line)
	return ind
}
