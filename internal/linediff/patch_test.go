package linediff

import (
	"fmt"
	"strconv"
	"strings"
)

// applyUnified applies a unified diff to old the way patch(1) reads one, checking every
// context and deleted line against old and every hunk's counts against its lines, and returns
// the new text.
func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	oldLines := splitKeep(old)
	rows := strings.SplitAfter(diff, "\n")
	if len(rows) < 3 || !strings.HasPrefix(rows[0], "--- ") || !strings.HasPrefix(rows[1], "+++ ") || rows[len(rows)-1] != "" {
		return "", fmt.Errorf("no --- / +++ header or no final newline in %q", diff)
	}
	rows = rows[2 : len(rows)-1]
	var out []string
	pos, newPos := 0, 0 // lines of old consumed, lines of new written
	for len(rows) > 0 {
		o0, oc, n0, nc, err := parseHeader(rows[0])
		if err != nil {
			return "", err
		}
		rows = rows[1:]
		if oc > 0 {
			o0--
		}
		if nc > 0 {
			n0--
		}
		if o0 < pos || o0 > len(oldLines) {
			return "", fmt.Errorf("hunk at old line %d after line %d", o0, pos)
		}
		out = append(out, oldLines[pos:o0]...)
		newPos += o0 - pos
		pos = o0
		if n0 != newPos {
			return "", fmt.Errorf("hunk says new line %d, it is %d", n0, newPos)
		}
		seenOld, seenNew := 0, 0
		for len(rows) > 0 && !strings.HasPrefix(rows[0], "@@ ") {
			r := rows[0]
			rows = rows[1:]
			text := r[1:]
			if len(rows) > 0 && rows[0] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				rows = rows[1:]
			}
			switch r[0] {
			case ' ', '-':
				if pos >= len(oldLines) || oldLines[pos] != text {
					return "", fmt.Errorf("line %d of old is not %q", pos+1, text)
				}
				pos++
				seenOld++
				if r[0] == ' ' {
					out = append(out, text)
					seenNew++
				}
			case '+':
				out = append(out, text)
				seenNew++
			default:
				return "", fmt.Errorf("unexpected row %q", r)
			}
		}
		if seenOld != oc || seenNew != nc {
			return "", fmt.Errorf("hunk counts %d,%d; lines %d,%d", oc, nc, seenOld, seenNew)
		}
		newPos += seenNew
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, ""), nil
}

// parseHeader reads "@@ -l[,c] +l[,c] @@".
func parseHeader(r string) (o0, oc, n0, nc int, err error) {
	f := strings.Fields(r)
	if len(f) != 4 || f[0] != "@@" || f[3] != "@@" || f[1][0] != '-' || f[2][0] != '+' {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", r)
	}
	rng := func(s string) (int, int, error) {
		l, c, ok := strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(l)
		if err != nil || !ok {
			return n, 1, err
		}
		count, err := strconv.Atoi(c)
		if err == nil && count == 1 {
			err = fmt.Errorf("count 1 written out in %q", s)
		}
		return n, count, err
	}
	if o0, oc, err = rng(f[1]); err == nil {
		n0, nc, err = rng(f[2])
	}
	return
}

// splitKeep splits s into lines, each keeping its '\n'.
func splitKeep(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
