package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/reinhq/rein/internal/termmd"
	"github.com/reinhq/rein/internal/termtext"
)

// styles are the UI's colours and attributes. Without colour (NO_COLOR) every style is
// plain: what matters is also said by a marker (›, ⏺, +, -, !), never by colour alone.
type styles struct {
	color, dark bool

	user, dim, tool, ok, bad, warn, add, del, hunk, accent, status, key lipgloss.Style
}

func newStyles(useColor, dark bool) *styles {
	s := &styles{color: useColor, dark: dark}
	if !useColor {
		return s
	}
	pick := func(light, darkc string) color.Color {
		if dark {
			return lipgloss.Color(darkc)
		}
		return lipgloss.Color(light)
	}
	s.user = lipgloss.NewStyle().Bold(true).Foreground(pick("#1d4ed8", "#93c5fd"))
	s.dim = lipgloss.NewStyle().Foreground(pick("#6b7280", "#9ca3af"))
	s.tool = lipgloss.NewStyle().Bold(true).Foreground(pick("#7c3aed", "#c4b5fd"))
	s.ok = lipgloss.NewStyle().Foreground(pick("#15803d", "#86efac"))
	s.bad = lipgloss.NewStyle().Foreground(pick("#b91c1c", "#fca5a5"))
	s.warn = lipgloss.NewStyle().Foreground(pick("#b45309", "#fcd34d"))
	s.add = lipgloss.NewStyle().Foreground(pick("#15803d", "#86efac"))
	s.del = lipgloss.NewStyle().Foreground(pick("#b91c1c", "#fca5a5"))
	s.hunk = lipgloss.NewStyle().Foreground(pick("#0e7490", "#67e8f9"))
	s.accent = lipgloss.NewStyle().Bold(true).Foreground(pick("#b45309", "#fcd34d"))
	s.status = lipgloss.NewStyle().Foreground(pick("#374151", "#d1d5db")).Background(pick("#e5e7eb", "#1f2937"))
	s.key = lipgloss.NewStyle().Bold(true)
	return s
}

// markdownTheme is how finished answers look (package termmd). Without colour the inline
// markers stay in the text (**strong**, `code`): what the colour would say.
func (s *styles) markdownTheme() termmd.Theme {
	if !s.color {
		return termmd.Theme{Marks: true}
	}
	pick := func(light, darkc string) color.Color {
		if s.dark {
			return lipgloss.Color(darkc)
		}
		return lipgloss.Color(light)
	}
	st := lipgloss.NewStyle
	return termmd.Theme{
		Heading:   sgr(st().Bold(true).Foreground(pick("#1d4ed8", "#93c5fd"))),
		Strong:    sgr(st().Bold(true)),
		Emph:      sgr(st().Italic(true)),
		Strike:    sgr(st().Strikethrough(true)),
		Code:      sgr(st().Foreground(pick("#b91c1c", "#fca5a5"))),
		CodeBlock: sgr(st().Foreground(pick("#374151", "#d1d5db"))),
		Link:      sgr(st().Underline(true).Foreground(pick("#0e7490", "#67e8f9"))),
		URL:       sgr(st().Foreground(pick("#6b7280", "#9ca3af"))),
		Quote:     sgr(st().Foreground(pick("#6b7280", "#9ca3af"))),
		Rule:      sgr(st().Foreground(pick("#6b7280", "#9ca3af"))),
		Marker:    sgr(st().Foreground(pick("#b45309", "#fcd34d"))),
	}
}

// sgr is a style as the escape sequences it puts around text, computed once: rendering
// every run of a long answer through lipgloss would cost more than the layout.
func sgr(st lipgloss.Style) func(string) string {
	open, end, ok := strings.Cut(st.Render("x"), "x")
	if !ok || open == "" {
		return nil
	}
	return func(s string) string { return open + s + end }
}

// clean makes text from a model or a tool safe to show (termtext) and lays tabs out as
// spaces.
func clean(s string) string {
	s = termtext.Visible(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// plain is a style that changes nothing.
func plain(s ...string) string { return strings.Join(s, " ") }
