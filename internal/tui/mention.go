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

// ranked is what the editor's last word completes to, best first (nothing for most
// words): the slash commands for a "/…" editor, the workspace's files for an "@…" word.
func (m *Model) ranked(v string) completions {
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") && !strings.ContainsAny(v, " \t\n") {
		return m.slashCompletions(v)
	}
	w := mentionWord(v)
	if w == "" {
		return completions{}
	}
	if m.files == nil {
		ws, _ := m.e.host.(Workspace)
		if ws == nil {
			return completions{}
		}
		files, err := ws.Files()
		if err != nil {
			files = []string{}
		}
		m.files = files
	}
	c := completions{word: w}
	for _, p := range c.take(fuzzy(m.files, w[1:])) {
		c.items = append(c.items, completion{insert: "@" + p})
	}
	return c
}

// fuzzy ranks the paths holding the letters of q in order (case-insensitively): a match
// in the file's base name before one in its directories, a contiguous one before a
// scattered one, then shorter paths, then by name.
func fuzzy(paths []string, q string) []string {
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
	for _, h := range hits {
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
