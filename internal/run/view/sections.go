package view

import (
	"strings"

	"github.com/reinhq/rein/internal/artifact"
)

// printer writes a JSON value as sections, bullets and indented fields.
type printer struct {
	b   *strings.Builder
	ref func(string) (string, bool)
}

// top writes a top-level value: an object as one "## Heading" section per key.
func (p *printer) top(n *node) {
	if n.kind != kindObject || n.empty() {
		p.block(n, 0, "")
		return
	}
	for i, m := range n.members {
		if i > 0 {
			p.b.WriteString("\n")
		}
		p.b.WriteString("## " + title(m.key) + "\n")
		p.block(m.value, 0, m.key)
	}
}

// block writes n on lines of its own, indented by indent; key is the key n is the value of.
func (p *printer) block(n *node, indent int, key string) {
	pad := strings.Repeat(" ", indent)
	switch {
	case n.empty():
		p.b.WriteString(pad + "(none)\n")
	case n.scalar():
		p.b.WriteString(pad)
		p.text(n, indent, key)
	case n.kind == kindArray:
		for _, it := range n.items {
			p.bullet(it, indent, key)
		}
	default:
		for _, m := range n.members {
			p.field(pad, m, indent)
		}
	}
}

// field writes "key: value" (a scalar) or "key:" and the value indented below it; lead is
// what starts the line (indentation, or indentation and a bullet).
func (p *printer) field(lead string, m member, indent int) {
	p.b.WriteString(lead + words(m.key) + ":")
	switch {
	case m.value.empty():
		p.b.WriteString(" (none)\n")
	case m.value.scalar():
		p.b.WriteString(" ")
		p.text(m.value, indent, m.key)
	default:
		p.b.WriteString("\n")
		p.block(m.value, indent+2, m.key)
	}
}

// bullet writes one list item: "- value", or an object's first field after the bullet and its
// other fields aligned below it.
func (p *printer) bullet(n *node, indent int, key string) {
	pad := strings.Repeat(" ", indent)
	switch {
	case n.empty() || n.scalar():
		p.b.WriteString(pad + "- ")
		if n.empty() {
			p.b.WriteString("(none)\n")
			return
		}
		p.text(n, indent+2, key)
	case n.kind == kindArray:
		p.b.WriteString(pad + "-\n")
		p.block(n, indent+2, key)
	default:
		for i, m := range n.members {
			lead := pad + "  "
			if i == 0 {
				lead = pad + "- "
			}
			p.field(lead, m, indent+2)
		}
	}
}

// text writes a scalar and ends the line. A string's later lines are indented by indent+2, so
// they cannot start at the margin of the level they belong to. A reference id gets its digest.
func (p *printer) text(n *node, indent int, key string) {
	s := n.text
	if n.kind == kindString && isReferenceKey(key) {
		if d, ok := p.resolve(s); ok {
			s += " (" + d + ")"
		} else {
			s += " (no artifact of this run has this id)"
		}
	}
	cont := "\n" + strings.Repeat(" ", indent+2)
	p.b.WriteString(strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", cont) + "\n")
}

func (p *printer) resolve(id string) (string, bool) {
	if p.ref == nil {
		return "", false
	}
	return p.ref(id)
}

// isReferenceKey reports whether the strings under key are reference ids: "references",
// "inputReferences" and the like.
func isReferenceKey(key string) bool {
	return key == "references" || strings.HasSuffix(key, "References")
}

// References returns the reference ids an artifact's JSON blocks name (the strings under
// references-keys, see the package documentation), each once, in order. A file that does not
// parse names none.
func References(data []byte) []string {
	parsed, err := artifact.Parse(data)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(n *node, key string)
	walk = func(n *node, key string) {
		switch n.kind {
		case kindString:
			if isReferenceKey(key) && !seen[n.text] {
				seen[n.text] = true
				out = append(out, n.text)
			}
		case kindArray:
			for _, it := range n.items {
				walk(it, key)
			}
		case kindObject:
			for _, m := range n.members {
				walk(m.value, m.key)
			}
		}
	}
	for _, block := range jsonBlocks(string(parsed.Body)) {
		if n, err := parseJSON([]byte(block)); err == nil {
			walk(n, "")
		}
	}
	return out
}
