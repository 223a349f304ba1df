package tui

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/wire"
)

// Model is the UI's bubbletea model. It lives on the UI goroutine; what the agent's
// goroutines report reaches it as messages through its engine.
type Model struct {
	ctx context.Context
	e   *engine

	width, height int
	st            *styles
	md            *markdown
	t             *transcript
	input         editor
	// history of submitted inputs, oldest first; hist is the position while browsing.
	history []string
	hist    int
	draft   string

	scroll     int
	atTop      bool
	thinking   bool
	expand     bool
	help       bool
	quitting   bool
	armedQuit  bool
	compacting bool
	opening    bool
	ask        *askMsg
	picker     *picker
	denying    bool
	// files are the workspace's files for @ mentions (nil until the first "@").
	files []string
	// sel is the choice in the completion popup.
	sel popupState
	// pastes are the collapsed pastes of this UI session, #1 first.
	pastes []pasted
	getenv func(string) string
	// always: the user chose "always allow" and picks the settings file next.
	always       bool
	savedInput   string
	steer, follw int
	// what the status line shows beyond Info.
	ctxTokens int
	usage     wire.Usage
	useColor  bool
	// the editor's last drawing and what it showed
	inputKey  inputKey
	inputView []string
	// the status line's last drawing and what it showed
	statusKey, statusView string
}

// Options configure the UI.
type Options struct {
	// Color says whether colours are used (false with NO_COLOR).
	Color bool
	// Dark says the terminal's background is dark (the first guess; the terminal's answer to
	// a background query replaces it).
	Dark bool
	// Width and Height are the first size (the terminal's report replaces them).
	Width, Height int
	// Getenv reads the environment ($VISUAL, $EDITOR for Ctrl+G); nil reads none.
	Getenv func(string) string
}

// New opens the first runtime through host (as the command line says; its questions are
// asked before the UI runs, on the plain terminal) and returns the UI for it. /model and
// /new reopen through host. ctx bounds every run. The caller closes the runtime with
// [Model.Close] once the program has ended.
func New(ctx context.Context, host Host, o Options) (*Model, error) {
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Height <= 0 {
		o.Height = 24
	}
	e := newEngine(host)
	rt, info, err := host.Open(ctx, e.request(Request{Mode: OpenStart}, false))
	if err != nil {
		return nil, err
	}
	e.set(rt, info)
	m := &Model{ctx: ctx, e: e, width: o.Width, height: o.Height, useColor: o.Color, md: &markdown{}, getenv: o.Getenv}
	if m.getenv == nil {
		m.getenv = func(string) string { return "" }
	}
	m.st = newStyles(o.Color, o.Dark)
	m.t = newTranscript(o.Width)
	m.input = newInput(o.Width, m.st)
	m.resetUsage()
	if rt != nil {
		m.t.history(rt.Context())
		m.ctxTokens = contextTokens(rt.Context())
	}
	for _, n := range e.early {
		m.t.add(newNotice(n, "info"))
	}
	for _, d := range info.Diagnostics {
		m.t.add(newNotice("context: "+d, "warn"))
	}
	return m, nil
}

// Close waits for the run in progress (cancelled when the program's context ended) and
// closes the runtime. Call it once the program has returned.
func (m *Model) Close() error {
	if _, err := m.e.abort("the UI stopped"); err != nil {
		m.e.stop()
		return errors.Join(err, m.e.finish())
	}
	m.e.stop()
	return m.e.finish()
}

// inputKey is what the editor's drawn rows depend on.
type inputKey struct {
	width int
	st    *styles
	rev   uint64
}

// inputRows are the editor's rows, drawn again only when what they show changed.
func (m *Model) inputRows() []string {
	key := inputKey{m.width, m.st, m.input.rev}
	if key != m.inputKey || m.inputView == nil {
		m.inputKey, m.inputView = key, strings.Split(m.input.View(), "\n")
	}
	return m.inputView
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd {
	m.e.started.Store(true)
	return tea.Batch(m.e.wait(), tea.RequestBackgroundColor)
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	if _, ok := msg.(engineMsg); ok {
		cmds = append(cmds, m.e.wait())
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		if m.useColor {
			m.st = newStyles(true, msg.IsDark())
			m.input.SetStyles(m.st)
		}
	case tea.KeyPressMsg:
		cmds = append(cmds, m.key(msg))
	case tea.PasteMsg:
		m.paste(msg.Content)
	case eventMsg:
		m.event(msg.ev)
	case noticeMsg:
		m.t.add(newNotice(msg.text, "info"))
	case queueMsg:
		m.steer, m.follw = msg.steering, msg.followUps
	case askMsg:
		m.ask = &msg
		m.armedQuit = false
	case runDoneMsg:
		cmds = append(cmds, m.runDone(msg))
	case openedMsg:
		m.opened(msg)
	case compactedMsg:
		m.compacted(msg)
	case editedMsg:
		cmds = append(cmds, m.edited(msg))
	case clipboardMsg:
		m.pasteClipboard(msg)
	}
	if m.quitting && !m.e.running() && !m.opening && !m.compacting {
		cmds = append(cmds, tea.Quit)
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 6)
	m.t.resize(m.width)
	m.input.SetWidth(m.width)
}

func (m *Model) event(ev wire.Event) {
	m.t.apply(ev)
	switch ev.Type {
	case "message_end":
		if msg := ev.Message; msg != nil && msg.Role == string(llm.RoleAssistant) && msg.Usage != nil {
			u := msg.Usage
			m.ctxTokens = u.Input + u.CacheRead + u.CacheWrite + u.Output
			m.usage.Input += u.Input
			m.usage.Output += u.Output
			m.usage.CacheRead += u.CacheRead
			m.usage.CacheWrite += u.CacheWrite
			m.usage.CostUSD += u.CostUSD
		}
	case "agent_end", "compaction":
		m.resetUsage()
	}
}

func (m *Model) resetUsage() {
	if rt := m.e.runtime(); rt != nil {
		m.usage = wire.NewUsage(rt.Usage())
	}
}

// contextTokens is what the last answer of msgs says the context held.
func contextTokens(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u := msgs[i].Usage; msgs[i].Role == llm.RoleAssistant && u != nil {
			return u.Input + u.CacheRead + u.CacheWrite + u.Output
		}
	}
	return 0
}

// submit handles Enter: a slash command, a prompt, or (while the agent works) a queued
// message.
func (m *Model) submit(followUp bool) tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	m.remember(text)
	m.input.Reset()
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		return m.command(m.unfold(text))
	}
	return m.send(m.unfold(strings.TrimPrefix(text, "/")), followUp) // "//x" sends "/x"
}

// send sends text as a prompt, or queues it while the agent works.
func (m *Model) send(text string, followUp bool) tea.Cmd {
	prompt := m.prompt(text)
	if m.e.running() || m.compacting || m.opening {
		q := m.e.enqueue(prompt, followUp)
		m.steer, m.follw = q.steering, q.followUps
		return nil
	}
	m.scroll = 0
	if err := m.e.start(m.ctx, &prompt); err != nil {
		m.t.add(newNotice(err.Error(), "error"))
	}
	return nil
}

// runDone ends a run: messages queued after the agent's last look start the next run when
// it completed; otherwise they go back into the editor.
func (m *Model) runDone(d runDoneMsg) tea.Cmd {
	if d.err != nil && (d.out == nil || d.out.Err == nil) {
		m.t.add(newNotice(d.err.Error(), "error"))
	}
	m.ask, m.denying, m.always = nil, false, false
	m.resetUsage()
	completed := d.out != nil && d.out.Status == "completed" && d.err == nil
	if m.quitting {
		m.e.dropQueued()
		m.steer, m.follw = 0, 0
		return nil
	}
	if completed {
		if next := m.e.takeQueued(); next != nil {
			s, f := m.e.queued()
			m.steer, m.follw = len(s), len(f)
			if err := m.e.start(m.ctx, next); err != nil {
				m.t.add(newNotice(err.Error(), "error"))
			}
			return nil
		}
	}
	if dropped := m.e.dropQueued(); len(dropped) > 0 {
		m.t.add(newNotice("the run ended before the queued messages were delivered: they are back in the editor", "warn"))
		cur := m.input.Value()
		m.input.SetValue(strings.TrimSpace(strings.Join(append(dropped, cur), "\n")))
	}
	m.steer, m.follw = 0, 0
	return nil
}

// abort stops the run in progress: the cancel is recorded before the run is signalled.
func (m *Model) abort() bool {
	ran, err := m.e.abort(errAborted.Error())
	if err != nil {
		m.t.add(newNotice("recording the abort: "+err.Error(), "error"))
	}
	return ran
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.abort()
	if m.e.running() || m.opening || m.compacting {
		return nil
	}
	return tea.Quit
}

func (m *Model) remember(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
	}
	m.hist, m.draft = len(m.history), ""
}

// browse moves through the input history (dir -1: older).
func (m *Model) browse(dir int) bool {
	if len(m.history) == 0 {
		return false
	}
	if m.hist == len(m.history) {
		m.draft = m.input.Value()
	}
	n := m.hist + dir
	if n < 0 || n > len(m.history) {
		return true
	}
	m.hist = n
	if n == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[n])
	}
	return true
}

// editQueued takes the message queued last back into the editor, before the agent takes
// it, for editing (Enter queues it again) or removal; a long one is collapsed again, and
// what the editor held follows it. False when nothing waits.
func (m *Model) editQueued() bool {
	text, ok, q := m.e.unqueueLast()
	if !ok {
		return false
	}
	m.steer, m.follw = q.steering, q.followUps
	cur := m.input.Value()
	m.input.Reset()
	m.paste(text)
	if cur != "" {
		m.input.InsertString("\n" + cur)
	}
	return true
}
