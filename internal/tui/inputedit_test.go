package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// keyPresses are key presses by the name bubbletea gives them (checked: a wrong entry
// fails the test that uses it, not silently another key).
var keyPresses = map[string]tea.KeyPressMsg{
	"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
	"home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd}, "backspace": {Code: tea.KeyBackspace}, "delete": {Code: tea.KeyDelete},
	"alt+left": {Code: tea.KeyLeft, Mod: tea.ModAlt}, "alt+right": {Code: tea.KeyRight, Mod: tea.ModAlt},
	"ctrl+left": {Code: tea.KeyLeft, Mod: tea.ModCtrl}, "ctrl+right": {Code: tea.KeyRight, Mod: tea.ModCtrl},
	"alt+backspace": {Code: tea.KeyBackspace, Mod: tea.ModAlt}, "shift+enter": {Code: tea.KeyEnter, Mod: tea.ModShift},
	"ctrl+a": {Code: 'a', Mod: tea.ModCtrl}, "ctrl+e": {Code: 'e', Mod: tea.ModCtrl}, "ctrl+w": {Code: 'w', Mod: tea.ModCtrl},
	"ctrl+u": {Code: 'u', Mod: tea.ModCtrl}, "ctrl+k": {Code: 'k', Mod: tea.ModCtrl}, "ctrl+j": {Code: 'j', Mod: tea.ModCtrl},
	"ctrl+d": {Code: 'd', Mod: tea.ModCtrl}, "alt+d": {Code: 'd', Mod: tea.ModAlt}, "ctrl+home": {Code: tea.KeyHome, Mod: tea.ModCtrl},
	"ctrl+end": {Code: tea.KeyEnd, Mod: tea.ModCtrl},
}

// press sends the named keys to e.
func press(t *testing.T, e *editor, names ...string) {
	t.Helper()
	for _, n := range names {
		k, ok := keyPresses[n]
		if !ok || k.String() != n {
			t.Fatalf("no key press named %q (the table has %q)", n, k.String())
		}
		e.Update(k)
	}
}

// typeText types s into e, one key press a rune.
func typeText(e *editor, s string) {
	for _, r := range s {
		e.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// rows is what e shows, one string a row, without the cursor's attributes.
func rows(e *editor) []string { return strings.Split(ansi.Strip(e.View()), "\n") }

func testEditor(width int) *editor {
	e := newInput(width, newStyles(false, true))
	return &e
}

func TestEditorEditing(t *testing.T) {
	for _, c := range []struct {
		name, typed string
		keys        []string
		want        string
		line, col   int
	}{
		{"typed", "héllo 世界", nil, "héllo 世界", 0, 8},
		{"newline keys", "a", []string{"ctrl+j", "shift+enter"}, "a\n\n", 2, 0},
		{"left and insert", "ac", []string{"left"}, "ac", 0, 1},
		{"word back and forward", "one two three", []string{"alt+left", "alt+left", "ctrl+right"}, "one two three", 0, 7},
		{"ctrl+w deletes the word before", "one two  ", []string{"ctrl+w"}, "one ", 0, 4},
		{"alt+backspace too", "one two", []string{"alt+backspace"}, "one ", 0, 4},
		{"alt+d deletes the word after", "one two", []string{"home", "alt+d"}, " two", 0, 0},
		{"ctrl+u to the line's start", "one two", []string{"left", "left", "ctrl+u"}, "wo", 0, 0},
		{"ctrl+k to the line's end", "one two", []string{"ctrl+a", "right", "ctrl+k"}, "o", 0, 1},
		{"home and end", "abc", []string{"home", "right", "end", "left"}, "abc", 0, 2},
		{"backspace joins lines", "ab", []string{"ctrl+j", "backspace", "backspace"}, "a", 0, 1},
		{"delete joins lines", "ab", []string{"ctrl+j", "left", "left", "delete", "delete"}, "a", 0, 1},
		{"ctrl+d deletes forward", "ab", []string{"home", "ctrl+d"}, "b", 0, 0},
		{"left crosses line ends", "a", []string{"ctrl+j", "left"}, "a\n", 0, 1},
		{"right crosses line ends", "a", []string{"ctrl+j", "ctrl+home", "right", "right"}, "a\n", 1, 0},
		{"ctrl+end", "a", []string{"ctrl+j", "ctrl+home", "ctrl+end"}, "a\n", 1, 0},
		{"ctrl+w at a line's start joins", "a", []string{"ctrl+j", "ctrl+w"}, "a", 0, 1},
		{"backspace at the start does nothing", "", []string{"backspace", "delete", "left"}, "", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testEditor(80)
			typeText(e, c.typed)
			press(t, e, c.keys...)
			if got := e.Value(); got != c.want {
				t.Errorf("value %q, want %q", got, c.want)
			}
			if e.Line() != c.line || e.Column() != c.col {
				t.Errorf("cursor at line %d column %d, want %d %d", e.Line(), e.Column(), c.line, c.col)
			}
			if e.LineCount() != strings.Count(c.want, "\n")+1 {
				t.Errorf("%d lines for %q", e.LineCount(), c.want)
			}
		})
	}
}

// TestEditorInsertString: inserted text is sanitised (line ends, tabs, control characters
// such as escape sequences' ESC) and the cursor ends after it; SetValue puts it at the end.
func TestEditorInsertString(t *testing.T) {
	e := testEditor(80)
	typeText(e, "[]")
	press(t, e, "left")
	e.InsertString("a\r\nb\rc\td\x1b[2Je\x07")
	if got, want := e.Value(), "[a\nb\nc    d[2Je]"; got != want {
		t.Errorf("value %q, want %q", got, want)
	}
	if e.Line() != 2 || e.Column() != len([]rune("c    d[2Je")) {
		t.Errorf("cursor at %d:%d", e.Line(), e.Column())
	}
	e.SetValue("x\nyz")
	if e.Line() != 1 || e.Column() != 2 || e.Value() != "x\nyz" {
		t.Errorf("after SetValue: %q at %d:%d", e.Value(), e.Line(), e.Column())
	}
	e.Reset()
	if e.Value() != "" || e.Line() != 0 || e.Column() != 0 || e.Height() != 1 {
		t.Errorf("after Reset: %q at %d:%d, height %d", e.Value(), e.Line(), e.Column(), e.Height())
	}
}

// TestEditorDropsBidiControls: the bidirectional overrides and isolates termtext makes
// visible elsewhere are dropped from what the editor holds, so a pasted text cannot reorder
// what its reader sees.
func TestEditorDropsBidiControls(t *testing.T) {
	e := testEditor(80)
	e.InsertString("a\u202eb\u2066c\u2069d\u0085e")
	if got, want := e.Value(), "abcde"; got != want {
		t.Errorf("value %q, want %q", got, want)
	}
}

// TestEditorWraps: rows break after the last space that fits, a word longer than a row
// breaks where the row ends, wide characters are never split, and every row is at most the
// width (the cursor included).
func TestEditorWraps(t *testing.T) {
	for _, c := range []struct {
		name  string
		width int // 8 cells of text for 11: the prompt and the cursor's cell
		text  string
		want  []string
	}{
		{"words", 11, "hello world foo", []string{"> hello ", "> world ", "> foo"}},
		{"a long word", 11, "abcdefghijkl", []string{"> abcdefgh", "> ijkl"}},
		{"a space hangs off a full row", 11, "abcdefgh ij", []string{"> abcdefgh ", "> ij"}},
		{"a trailing hanging space gets a row for the cursor", 11, "abcdefgh ", []string{"> abcdefgh ", ">  "}},
		{"wide characters", 11, "中文中文中文", []string{"> 中文中文", "> 中文"}},
		{"wide characters are not split", 10, "中文中文", []string{"> 中文中", "> 文"}},
		{"combining marks take no cell", 11, "e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301x", []string{"> " + strings.Repeat("e\u0301", 8), "> x"}},
		{"lines", 11, "ab\ncd", []string{"> ab", "> cd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testEditor(c.width)
			e.SetValue(c.text)
			got := rows(e)
			// the cursor at the end is drawn as a space
			got[len(got)-1] = strings.TrimSuffix(got[len(got)-1], " ")
			want := slicesCopy(c.want)
			want[len(want)-1] = strings.TrimSuffix(want[len(want)-1], " ")
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("rows %q, want %q", got, want)
			}
			for _, r := range strings.Split(ansi.Strip(e.View()), "\n") {
				if w := ansi.StringWidth(r); w > c.width {
					t.Errorf("row %q is %d cells wide, the width is %d", r, w, c.width)
				}
			}
			if e.Height() != len(c.want) {
				t.Errorf("height %d, want %d", e.Height(), len(c.want))
			}
		})
	}
}

func slicesCopy(s []string) []string { return append([]string(nil), s...) }

// TestEditorCursorRows: Up and Down move between wrapped rows keeping the display column
// (wide characters counted as two), Line stays the logical line, and the cursor is drawn
// where it is.
func TestEditorCursorRows(t *testing.T) {
	e := testEditor(11)
	e.SetValue("hello world foo\n中文中文")
	// rows: "hello " "world " "foo" "中文中文"; the cursor is after 中文中文
	press(t, e, "left", "up") // from column 6 of 中文中文 (cell 6) to "foo" (3 cells)
	if e.Line() != 0 || e.Column() != 15 {
		t.Fatalf("up from the last line: line %d column %d, want 0 15", e.Line(), e.Column())
	}
	press(t, e, "up") // the kept column 6 on "world "
	if e.Column() != 12-1 {
		t.Errorf("up to the second row: column %d, want 11", e.Column())
	}
	press(t, e, "up", "up") // to the first row, then it stays
	if e.Line() != 0 || e.Column() != 5 {
		t.Errorf("up to the first row: column %d, want 5", e.Column())
	}
	press(t, e, "down", "down", "down")
	if e.Line() != 1 || e.Column() != 3 {
		t.Errorf("down to the last line: line %d column %d, want 1 3 (cell 6)", e.Line(), e.Column())
	}
	press(t, e, "home")
	got := e.View()
	if !strings.Contains(got, reverse("中")+"文中文") {
		t.Errorf("the cursor is not drawn on the first character of the last row: %q", got)
	}
	press(t, e, "down")
	if e.Line() != 1 || e.Column() != 0 {
		t.Errorf("down on the last row moved the cursor to %d:%d", e.Line(), e.Column())
	}
}

// TestEditorHeight: the editor grows with its rows up to six, then scrolls to keep the
// cursor in view.
func TestEditorHeight(t *testing.T) {
	e := testEditor(20)
	if e.Height() != 1 || ansi.Strip(e.View()) != "> Type a message; /" {
		t.Errorf("the empty editor is %d rows: %q", e.Height(), ansi.Strip(e.View()))
	}
	for i := range 8 {
		if i > 0 {
			press(t, e, "ctrl+j")
		}
		typeText(e, string(rune('a'+i)))
		if want := min(i+1, 6); e.Height() != want || len(rows(e)) != want {
			t.Errorf("with %d lines the height is %d (%d rows drawn), want %d", i+1, e.Height(), len(rows(e)), want)
		}
	}
	if got := strings.Join(rows(e), "|"); got != "> c|> d|> e|> f|> g|> h " {
		t.Errorf("scrolled to the cursor at the end: %q", got)
	}
	press(t, e, "ctrl+home")
	if got := strings.Join(rows(e), "|"); got != "> a|> b|> c|> d|> e|> f" {
		t.Errorf("scrolled to the cursor at the start: %q", got)
	}
	e.SetWidth(8) // 5 cells of text: "a" "b" … stay one row each
	if e.Height() != 6 {
		t.Errorf("after a resize the height is %d", e.Height())
	}
	e.SetValue(strings.Repeat("x", 12)) // three rows at width 8
	if e.Height() != 3 {
		t.Errorf("12 runes at width 8: height %d, want 3", e.Height())
	}
}

// TestClipboardPaste: Ctrl+V reads the clipboard with the first reader on $PATH through
// the process runner and pastes what it printed (a long text collapsed like any paste);
// with none installed, a notice says so.
func TestClipboardPaste(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	h := newScriptHost(t, "version: 1\nturns:\n  - text: ok\n", "")
	_, tm := start(t, h)
	tm.Send(tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl})
	waitFor(t, tm, "no clipboard reader on $PATH")

	xclip := "#!/bin/sh\n[ \"$*\" = '-out -selection clipboard' ] || exit 9\nprintf 'from the clipboard'\n"
	if err := os.WriteFile(filepath.Join(bin, "xclip"), []byte(xclip), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.Type("text ")
	tm.Send(tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl})
	waitFor(t, tm, "> text from the clipboard")
}

// TestHistoryAtTheEditorsEdges: Up and Down move between the editor's rows, wrapped ones
// too; only on its first or last row do they browse the inputs sent before, and the draft
// comes back after the newest.
func TestHistoryAtTheEditorsEdges(t *testing.T) {
	m := benchModel()
	m.remember("first")
	m.remember("second")
	draft := strings.Repeat("word ", 20) + "\nend" // two rows at 80, then a line
	m.input.SetValue(draft)
	up, down := tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyDown}
	for i, want := range []struct {
		key   tea.KeyPressMsg
		value string
		line  int
	}{
		{up, draft, 0}, {up, draft, 0}, {up, "second", 0}, {up, "first", 0}, {up, "first", 0},
		{down, "second", 0}, {down, draft, 1},
	} {
		m.key(want.key)
		if got := m.input.Value(); got != want.value || m.input.Line() != want.line {
			t.Fatalf("after key %d (%s): %q on line %d, want %q on line %d", i+1, want.key, got, m.input.Line(), want.value, want.line)
		}
	}
	if !m.input.onLastRow() {
		t.Error("the restored draft's cursor is not on its last row")
	}
}

// TestEditorCutBefore: a placeholder before the cursor goes whole, the rest of the line
// stays, and Up afterwards starts from where the cursor is now, not from a column kept by
// an earlier Up or Down.
func TestEditorCutBefore(t *testing.T) {
	const tag = "[pasted 2 lines, 9 B #1]"
	e := testEditor(80)
	typeText(e, "0123456789")
	press(t, e, "ctrl+j")
	typeText(e, "ab"+tag)
	press(t, e, "up", "down") // Up and Down keep the column they started from: after the tag
	if e.cutBefore("[pasted") || e.cutBefore("") {
		t.Fatal("cut what is not just before the cursor")
	}
	if !e.cutBefore(tag) {
		t.Fatalf("the placeholder before the cursor was not cut: %q col %d", e.Value(), e.Column())
	}
	if e.Value() != "0123456789\nab" || e.Line() != 1 || e.Column() != 2 {
		t.Fatalf("after the cut: %q at %d:%d", e.Value(), e.Line(), e.Column())
	}
	press(t, e, "up")
	if e.Line() != 0 || e.Column() != 2 {
		t.Errorf("Up after the cut went to %d:%d, want 0:2 (the column before the cut was kept)", e.Line(), e.Column())
	}
}

// TestEditorRevision: every change or move gives the editor a new revision, so that a view
// kept by it is never stale; a key that changes nothing may keep it.
func TestEditorRevision(t *testing.T) {
	e := testEditor(40)
	seen := map[uint64]string{}
	check := func(what string) {
		t.Helper()
		v := e.View()
		if old, ok := seen[e.rev]; ok && old != v {
			t.Fatalf("%s: revision %d already drew %q, now %q", what, e.rev, old, v)
		}
		seen[e.rev] = v
	}
	check("start")
	typeText(e, "hello")
	check("typed")
	press(t, e, "left", "left")
	check("moved")
	press(t, e, "backspace")
	check("deleted")
	e.SetWidth(12)
	check("narrowed")
	typeText(e, " a longer line that wraps")
	check("wrapped")
	press(t, e, "up")
	check("up")
	e.SetStyles(newStyles(true, true))
	check("restyled")
	e.Reset()
	check("reset")
}
