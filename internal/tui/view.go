package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View implements tea.Model: the conversation, the queue, the question or the editor, and
// the status line. It reads only the rows it shows.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = true
	v.WindowTitle = "rein"
	return v
}

// frame is the screen as text.
func (m *Model) frame() string {
	if m.picker != nil {
		return m.pickerFrame()
	}
	bottom := m.bottom()
	h := max(m.height-len(bottom), 1)
	settings := &viewSettings{width: m.width, st: m.st, thinking: m.thinking, expand: m.expand, md: m.md}
	rows, top := m.t.rows(settings, h, m.scroll)
	m.atTop = top
	out := make([]string, 0, m.height)
	for i := len(rows); i < h; i++ {
		out = append(out, "")
	}
	for _, r := range rows {
		if len(r) > m.width { // no row is wider than its bytes: most need no measuring
			r = ansi.Truncate(r, m.width, "")
		}
		out = append(out, r)
	}
	out = append(out, bottom...)
	return strings.Join(out, "\n")
}

func (m *Model) transcriptHeight() int { return max(m.height-len(m.bottom()), 1) }

// bottom is what sits under the conversation.
func (m *Model) bottom() []string {
	var rows []string
	st := m.st
	if m.scroll > 0 {
		rows = append(rows, st.dim.Render(fmt.Sprintf("↓ %d rows below (PgDn)", m.scroll)))
	}
	steering, followUps := m.e.queued()
	for _, q := range steering {
		rows = append(rows, st.dim.Render(ansi.Truncate("queued steer: "+oneLine(clean(q)), m.width, "…")))
	}
	for _, q := range followUps {
		rows = append(rows, st.dim.Render(ansi.Truncate("queued follow-up: "+oneLine(clean(q)), m.width, "…")))
	}
	var c completions
	switch {
	case m.ask != nil && !m.denying:
		rows = append(rows, m.question()...)
	default:
		if m.denying {
			rows = append(rows, st.accent.Render("Why not? (the reason reaches the model; Enter sends, Esc goes back)"))
		} else {
			c = m.completions()
			rows = append(rows, m.popup(c)...)
		}
		rows = append(rows, m.inputRows()...)
	}
	rows = append(rows, m.hint(c))
	rows = append(rows, m.statusLine())
	return rows
}

// hint is the row of keys that apply now (c: the completions shown).
func (m *Model) hint(c completions) string {
	st := m.st
	switch {
	case m.armedQuit:
		return st.accent.Render("press Ctrl+C again to quit")
	case m.opening:
		return st.dim.Render("opening…")
	case m.compacting:
		return st.dim.Render("compacting… (typing queues)")
	case c.slash && len(c.items) > 0:
		return st.dim.Render("↑/↓ choose · Tab completes · Enter runs the command · Esc closes")
	case len(c.items) > 0 && m.sel.moved:
		return st.dim.Render("↑/↓ choose · Tab or Enter completes · Esc closes")
	case len(c.items) > 0:
		return st.dim.Render("↑/↓ choose · Tab completes · Enter send · Esc closes")
	case m.e.running() && m.steer+m.follw > 0:
		return st.dim.Render("working… Enter queues a steer · Alt+Up edits the last queued · Esc aborts")
	case m.e.running():
		return st.dim.Render("working… Enter queues a steer · Alt+Enter a follow-up · Esc aborts")
	}
	return st.dim.Render("Enter send · Ctrl+J new line · Ctrl+G editor · /help · Ctrl+C twice to quit")
}

// question shows the pending approval (the call, its command or diff) or yes/no question.
func (m *Model) question() []string {
	st, a := m.st, m.ask
	var rows []string
	if a.approval == nil {
		for _, l := range wrapText(clean(a.question), m.width-2) {
			rows = append(rows, st.accent.Render(l))
		}
		return append(rows, st.key.Render("[y]")+" yes  "+st.key.Render("[n]")+" no")
	}
	p := a.approval
	rows = append(rows, st.accent.Render(ansi.Truncate(fmt.Sprintf("%s wants to run: %s", p.Tool, oneLine(clean(p.Part))), m.width, "…")))
	rows = append(rows, st.dim.Render(fmt.Sprintf("permission rule %q asks first", p.Rule)))
	body := callDiff(p.Tool, string(p.Args))
	if body != nil {
		body = diffRows(body, st)
	} else if cmd := stringArg(string(p.Args), "command"); cmd != "" {
		body = wrapText(clean(cmd), m.width-4)
	}
	limit := max(3, m.height/2-4)
	if len(body) > limit {
		extra := len(body) - limit + 1
		body = append(body[:limit-1:limit-1], st.dim.Render(fmt.Sprintf("… %d more lines", extra)))
	}
	for _, r := range body {
		rows = append(rows, "  "+r)
	}
	return append(rows, m.approvalChoices()...)
}

// approvalChoices are the keys that answer an approval, or, after "always allow", where
// the rule is written.
func (m *Model) approvalChoices() []string {
	st := m.st
	if m.always {
		rule := m.e.rules().AllowRule(*m.ask.approval)
		where := st.key.Render("[u]") + " user settings ($REIN_HOME)  " + st.key.Render("[esc]") + " back"
		if m.current().Trusted {
			where = st.key.Render("[p]") + " project .rein/settings.json  " + where
		}
		return []string{st.accent.Render(ansi.Truncate("always allow "+clean(rule)+" — write it to:", m.width, "…")), where}
	}
	row := st.key.Render("[y]") + " allow once  " + st.key.Render("[s]") + " this session  "
	if m.e.rules() != nil {
		row += st.key.Render("[a]") + " always  "
	}
	return []string{row + st.key.Render("[n]") + " deny, say why  " + st.key.Render("[esc]") + " abort the run"}
}

// statusLine: provider/model, context used of the window, tokens and cost, queue, session,
// branch, sandbox and trust — the most useful first, since a narrow terminal cuts the end.
func (m *Model) statusLine() string {
	info := m.current()
	parts := []string{info.Provider + "/" + info.Model}
	ctx := "ctx " + tokens(m.ctxTokens)
	if info.ContextWindow > 0 {
		ctx = fmt.Sprintf("ctx %d%% %s/%s", m.ctxTokens*100/info.ContextWindow, tokens(m.ctxTokens), tokens(info.ContextWindow))
	}
	parts = append(parts, ctx)
	u := m.usage
	parts = append(parts, fmt.Sprintf("↑%s ↓%s $%.4f", tokens(u.Input+u.CacheRead+u.CacheWrite), tokens(u.Output), u.CostUSD))
	if n := m.steer + m.follw; n > 0 {
		parts = append(parts, fmt.Sprintf("queue %d", n))
	}
	if info.SessionID != "" {
		parts = append(parts, "session "+short(info.SessionID))
	} else {
		parts = append(parts, "no session")
	}
	if info.Branch != "" {
		parts = append(parts, "⎇ "+info.Branch)
	}
	if info.Sandboxed {
		parts = append(parts, "sandbox")
	}
	if info.Trusted {
		parts = append(parts, "trusted")
	}
	raw := " " + strings.Join(parts, " · ")
	if key := fmt.Sprintf("%d:%p:%s", m.width, m.st, raw); key != m.statusKey {
		line := ansi.Truncate(raw, m.width, "…")
		if pad := m.width - cellWidth(line); pad > 0 {
			line += strings.Repeat(" ", pad)
		}
		m.statusKey, m.statusView = key, m.st.status.Render(line)
	}
	return m.statusView
}

// tokens formats a token count: 950, 12.3k, 1.2M.
func tokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 100_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// short is the start of an id, enough to tell sessions apart on the status line.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
