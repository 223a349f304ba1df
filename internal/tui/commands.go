package tui

import (
	"fmt"
	"github.com/reinhq/rein/internal/lazy"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/llm"
)

// slash is one slash command.
type slash struct {
	name, args, help string
	run              func(m *Model, arg string) tea.Cmd
	// idle: refused while a run, compaction or reopening is in progress.
	idle bool
}

// slashCommands are the slash commands, listed on first use (the list's methods refer back to
// it, so a package-level initializer would be a cycle, and an init function runs at every start
// of rein, UI or not).
func slashCommands() []slash { return slashOnce.Get(listSlashCommands) }

var slashOnce lazy.Value[[]slash]

func listSlashCommands() []slash {
	return []slash{
		{name: "help", help: "keys and commands", run: (*Model).cmdHelp},
		{name: "model", args: "[PROVIDER/]MODEL", help: "switch the model (recorded in the session); without an argument, show it", run: (*Model).cmdModel, idle: true},
		{name: "compact", args: "[INSTRUCTIONS]", help: "summarize the older conversation to free context", run: (*Model).cmdCompact, idle: true},
		{name: "new", help: "start a new session", run: (*Model).cmdNew, idle: true},
		{name: "cost", help: "tokens and cost of the session", run: (*Model).cmdCost},
		{name: "session", help: "the session's id, directory and ledger head", run: (*Model).cmdSession},
		{name: "context", help: "what the next request carries", run: (*Model).cmdContext},
		{name: "thinking", args: "[off|minimal|low|medium|high]", help: "set the reasoning effort asked of the model for the rest of this UI session; without an argument, show the level and show or fold thinking", run: (*Model).cmdThinking, idle: true},
		{name: "resume", args: "[ID]", help: "pick a session of this workspace to continue (previews: first prompt, age, cost)", run: (*Model).cmdResume, idle: true},
		{name: "fork", args: "[ENTRY]", help: "continue in a new session from the last entry, or ENTRY; this one is untouched", run: (*Model).cmdFork, idle: true},
		{name: "tree", help: "the session's entries: continue from any of them in a new session", run: (*Model).cmdTree, idle: true},
		{name: "export", args: "[PATH]", help: "write the session as markdown, secrets redacted", run: (*Model).cmdExport},
		{name: "permissions", help: "the permission rules in force, and this UI session's allowances", run: (*Model).cmdPermissions},
		{name: "hooks", help: "the command hooks in force", run: (*Model).cmdHooks},
		{name: "skill:NAME", args: "[MESSAGE]", help: "send MESSAGE with the skill's full text pinned to it", run: nil},
		{name: "quit", help: "leave rein (a run in progress is aborted first)", run: func(m *Model, _ string) tea.Cmd { return m.quit() }},
	}
}

// command runs a slash command line.
func (m *Model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	if skill, ok := strings.CutPrefix(name, "skill:"); ok {
		return m.cmdSkill(skill, arg)
	}
	for _, c := range slashCommands() {
		if c.name != name || c.run == nil {
			continue
		}
		if c.idle && (m.e.running() || m.compacting || m.opening) {
			m.t.add(newNotice(fmt.Sprintf("/%s waits until the agent is idle: press Esc to abort the run", name), "warn"))
			return nil
		}
		return c.run(m, arg)
	}
	var names []string
	for _, c := range slashCommands() {
		names = append(names, "/"+c.name)
	}
	m.t.add(newNotice(fmt.Sprintf("unknown command /%s (known: %s; start a message with // to send a leading /)", name, strings.Join(names, " ")), "error"))
	return nil
}

func (m *Model) info(text string) { m.t.add(newNotice(text, "info")); m.scroll = 0 }

func (m *Model) cmdHelp(string) tea.Cmd {
	var b strings.Builder
	b.WriteString("keys: Enter send (while the agent works: queue as a steer) · Alt+Enter queue as a follow-up · Ctrl+J new line · Ctrl+G external editor ($VISUAL, $EDITOR, vi) · Up/Down history · Alt+Up (or Up on an empty editor) take back the last queued message · Tab complete / and @ · Esc abort the run · Ctrl+C abort, twice to quit · Ctrl+D quit on an empty line · Ctrl+T thinking · Ctrl+O expand tool output · PgUp/PgDn scroll\ncommands:")
	for _, c := range slashCommands() {
		fmt.Fprintf(&b, "\n  /%s", c.name)
		if c.args != "" {
			b.WriteString(" " + c.args)
		}
		b.WriteString(" — " + c.help)
	}
	m.info(b.String())
	return nil
}

func (m *Model) cmdModel(arg string) tea.Cmd {
	info := m.current()
	if arg == "" {
		m.info(fmt.Sprintf("model: %s/%s (switch with /model [PROVIDER/]MODEL)", info.Provider, info.Model))
		return nil
	}
	provider, model := info.Provider, arg
	if p, mo, ok := strings.Cut(arg, "/"); ok {
		provider, model = p, mo
	}
	rt := m.e.runtime()
	req := Request{Mode: OpenAgain, SessionDir: info.SessionDir, Provider: provider, Model: model}
	if rt != nil && info.SessionDir == "" {
		req.History, req.Usage = rt.Context(), rt.Usage()
	}
	back := Request{Mode: OpenAgain, SessionDir: info.SessionDir, Provider: info.Provider, Model: info.Model, History: req.History, Usage: req.Usage}
	return m.reopen(req, &back, "model: "+provider+"/"+model)
}

func (m *Model) cmdNew(string) tea.Cmd {
	return m.reopen(Request{Mode: OpenNew}, nil, "new session")
}

// reopen replaces the runtime on a goroutine (opening may ask questions in the UI). The
// same session must be closed before it is opened again; a new one is opened first. When
// the new configuration fails, back (if set) is opened instead.
func (m *Model) reopen(req Request, back *Request, what string) tea.Cmd {
	m.opening = true
	e, ctx := m.e, m.ctx
	return func() tea.Msg {
		old := e.runtime()
		if req.Mode == OpenAgain && old != nil {
			_ = e.finish()
		}
		rt, info, err := e.host.Open(ctx, e.request(req, true))
		if err != nil && back != nil {
			if rt2, info2, err2 := e.host.Open(ctx, e.request(*back, true)); err2 == nil {
				return openedMsg{rt: rt2, info: info2, err: err, what: what}
			}
		}
		if err == nil && req.Mode != OpenAgain && old != nil {
			_ = old.Close()
		}
		return openedMsg{rt: rt, info: info, err: err, what: what, fresh: req.Mode == OpenNew || req.Mode == OpenResume || req.Mode == OpenFork}
	}
}

func (m *Model) opened(o openedMsg) {
	m.opening = false
	if o.rt != nil {
		m.e.set(o.rt, o.info)
		if o.fresh && o.err == nil {
			m.t = newTranscript(m.width)
			m.t.history(o.rt.Context())
			m.ctxTokens = contextTokens(o.rt.Context())
			m.scroll = 0
		}
		m.resetUsage()
	}
	if o.err != nil {
		m.t.add(newNotice(fmt.Sprintf("%s: %s", o.what, o.err.Error()), "error"))
		if o.rt == nil {
			m.t.add(newNotice("no agent is open: try /model or /new, or /quit", "error"))
		}
		return
	}
	info := o.info
	text := fmt.Sprintf("%s: %s/%s", o.what, info.Provider, info.Model)
	if info.SessionID != "" {
		text += ", session " + info.SessionID
	}
	m.info(text)
}

func (m *Model) cmdCompact(arg string) tea.Cmd {
	rt := m.e.runtime()
	if rt == nil {
		m.t.add(newNotice("no agent is open", "error"))
		return nil
	}
	m.compacting = true
	m.info("compacting…")
	ctx := m.ctx
	return func() tea.Msg {
		before, after, err := rt.Compact(ctx, arg)
		return compactedMsg{before: len(before), after: len(after), err: err}
	}
}

func (m *Model) compacted(c compactedMsg) {
	m.compacting = false
	if c.err != nil {
		m.t.add(newNotice("compaction failed: "+c.err.Error(), "error"))
		return
	}
	m.resetUsage()
	if rt := m.e.runtime(); rt != nil {
		m.ctxTokens = 0 // unknown until the next answer reports it
	}
	m.info(fmt.Sprintf("compacted: %d messages → %d (a summary and %d kept)", c.before, c.after, max(c.after-1, 0)))
}

func (m *Model) cmdCost(string) tea.Cmd {
	u := m.usage
	m.info(fmt.Sprintf("session cost: $%.4f · input %d · output %d · cache read %d · cache write %d tokens", u.CostUSD, u.Input, u.Output, u.CacheRead, u.CacheWrite))
	return nil
}

func (m *Model) cmdSession(string) tea.Cmd {
	info, rt := m.current(), m.e.runtime()
	if info.SessionID == "" {
		m.info("no session: the conversation is kept in memory only (--no-session)")
		return nil
	}
	seq, hash := int64(0), ""
	if rt != nil {
		seq, hash = rt.Head()
	}
	m.info(fmt.Sprintf("session %s\ndirectory: %s\nledger head: seq %d, hash %s\nverify with: rein session verify %s", info.SessionID, info.SessionDir, seq, hash, info.SessionDir))
	return nil
}

func (m *Model) cmdContext(string) tea.Cmd {
	rt := m.e.runtime()
	if rt == nil {
		m.t.add(newNotice("no agent is open", "error"))
		return nil
	}
	msgs := rt.Context()
	counts := map[llm.Role]int{}
	for i := range msgs {
		counts[msgs[i].Role]++
	}
	info := m.current()
	m.info(fmt.Sprintf("the next request carries %d messages (%d user, %d assistant, %d tool results) on the system prompt; the last answer reported %s of %s tokens (see `rein context` for the whole assembly)",
		len(msgs), counts[llm.RoleUser], counts[llm.RoleAssistant], counts[llm.RoleTool], tokens(m.ctxTokens), tokens(info.ContextWindow)))
	return nil
}

// current is the open runtime's Info.
func (m *Model) current() Info {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	return m.e.info
}
