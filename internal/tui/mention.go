package tui

import (
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// Workspace lists the workspace's files for `@path` mentions; a [Host] may implement it
// (package cli does: git's tracked and untracked-but-not-ignored files, or a walk outside
// git). Without it `@` completes nothing.
type Workspace interface {
	// Files are the workspace's files, slash-separated and relative to it.
	Files() ([]string, error)
}

// maxMentions is how many completions are shown.
const maxMentions = 5

// mentionWord is the "@…" word the editor ends with ("" for none); the text before it
// starts the word.
func mentionWord(value string) string {
	i := strings.LastIndexAny(value, " \t\n")
	w := value[i+1:]
	if !strings.HasPrefix(w, "@") {
		return ""
	}
	return w
}

// mentions are the completions for the editor's "@…" word: the workspace's files (listed
// once per UI, on the first "@") that hold its letters in order, the best first.
func (m *Model) mentions() []string {
	w := mentionWord(m.input.Value())
	if w == "" {
		return nil
	}
	if m.files == nil {
		ws, _ := m.e.host.(Workspace)
		if ws == nil {
			return nil
		}
		files, err := ws.Files()
		if err != nil {
			files = []string{}
		}
		m.files = files
	}
	return fuzzy(m.files, w[1:], maxMentions)
}

// complete replaces the editor's "@…" word with the best completion; false when there is
// none.
func (m *Model) complete() bool {
	list := m.mentions()
	if len(list) == 0 {
		return false
	}
	v := m.input.Value()
	w := mentionWord(v)
	m.input.SetValue(v[:len(v)-len(w)] + "@" + list[0] + " ")
	return true
}

// fuzzy ranks the paths holding the letters of q in order (case-insensitively): a match
// in the file's base name before one in its directories, a contiguous one before a
// scattered one, then shorter paths, then by name; at most n.
func fuzzy(paths []string, q string, n int) []string {
	q = strings.ToLower(q)
	type hit struct {
		p     string
		score int
	}
	var hits []hit
	for _, p := range paths {
		lp := strings.ToLower(p)
		if !subsequence(lp, q) {
			continue
		}
		score := 0
		base := path.Base(lp)
		switch {
		case strings.HasPrefix(base, q):
			score = 3
		case strings.Contains(base, q):
			score = 2
		case strings.Contains(lp, q):
			score = 1
		}
		hits = append(hits, hit{p, score})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		if la, lb := utf8.RuneCountInString(a.p), utf8.RuneCountInString(b.p); la != lb {
			return la - lb
		}
		return strings.Compare(a.p, b.p)
	})
	var out []string
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.p)
	}
	return out
}

func subsequence(s, q string) bool {
	for _, c := range q {
		i := strings.IndexRune(s, c)
		if i < 0 {
			return false
		}
		s = s[i+utf8.RuneLen(c):]
	}
	return true
}
