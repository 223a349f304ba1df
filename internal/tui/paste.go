package tui

import (
	"fmt"
	"strings"
)

// A paste longer than pasteLines lines or pasteBytes bytes is shown collapsed in the
// editor, as a placeholder; what is sent carries the whole text.
const (
	pasteLines = 5
	pasteBytes = 1000
)

// pasted is one collapsed paste: the placeholder the editor shows and the text it stands
// for.
type pasted struct{ tag, text string }

// paste inserts text at the cursor: as typed when it is short, otherwise as a placeholder
// ("[pasted 42 lines, 3.1 KB #1]") that [Model.unfold] replaces with the text when the
// message is sent. Terminals send line ends as "\r": they become "\n".
func (m *Model) paste(text string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	if lines <= pasteLines && len(text) <= pasteBytes {
		m.input.InsertString(text)
		return
	}
	tag := fmt.Sprintf("[pasted %d lines, %s #%d]", lines, size(len(text)), len(m.pastes)+1)
	m.pastes = append(m.pastes, pasted{tag: tag, text: text})
	m.input.InsertString(tag)
}

// unfold replaces the placeholders text holds with the pastes they stand for (in one pass:
// a paste's own text is not searched again). A placeholder the user deleted takes its
// paste with it.
func (m *Model) unfold(text string) string {
	if len(m.pastes) == 0 {
		return text
	}
	pairs := make([]string, 0, 2*len(m.pastes))
	for _, p := range m.pastes {
		pairs = append(pairs, p.tag, p.text)
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// deletePaste handles Backspace right after a placeholder: the whole placeholder goes, so
// that no broken one is left behind. False when the cursor is not after one.
func (m *Model) deletePaste() bool {
	for _, p := range m.pastes {
		if m.input.cutBefore(p.tag) {
			return true
		}
	}
	return false
}

// size formats a byte count: 950 B, 3.1 KB, 2.4 MB.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
