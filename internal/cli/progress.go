package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/termtext"
	"github.com/reinhq/rein/internal/wire"
)

// progress shows a print-mode run on a terminal's stderr: one live status line (the turn,
// what runs now, the run's tokens and cost, a retry's countdown, the time since the start)
// and one line for each tool call as it starts (and one for a call that failed). It reads the
// wire events that --mode json prints and the interactive UI draws. Nothing of it reaches
// stdout, and without a terminal on stderr there is none (newProgress returns nil).
//
// Events arrive serialized from the kernel; a ticker redraws the line (the countdown, the
// clock) on a goroutine of its own, so the fields are under mu.
type progress struct {
	out   io.Writer
	width func() int
	now   func() time.Time
	conv  wire.Converter

	mu      sync.Mutex
	start   time.Time
	turn    int
	doing   string   // what the model does: waiting, writing, thinking, preparing a call
	running []string // the tools running now, by name
	tokens  int
	cost    float64
	retry   *wire.Retry
	retryAt time.Time
	// text is the text of the latest assistant message, as far as it streamed.
	text strings.Builder
	// drawn says the status line is on the screen (the cursor stands at its end); last is
	// what it says.
	drawn bool
	last  string
	// paused: a question is on the screen; nothing is drawn until it is answered.
	paused bool

	stop chan struct{}
	done chan struct{}
}

// progressTick is how often the status line is redrawn while nothing happens.
const progressTick = 500 * time.Millisecond

// newProgress returns the progress display for a print-mode run, or nil when stderr is not a
// terminal or quiet is set. It shows nothing until begin; its ticker runs until finish.
func newProgress(stderr io.Writer, quiet bool) *progress {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	p := &progress{out: f, now: time.Now, width: func() int {
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil || w <= 0 {
			return 80
		}
		return w
	}}
	return p
}

// begin starts the clock and the ticker, when the run starts.
func (p *progress) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = p.now()
	p.doing = "starting"
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

// event implements system.Options.Observe.
func (p *progress) event(ev kernel.Event) {
	w, ok := p.conv.Convert(ev)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.apply(w)
	p.draw()
}

// apply takes one wire event into the state, printing the lines it calls for.
func (p *progress) apply(w wire.Event) {
	if w.Turn > 0 {
		p.turn = w.Turn
	}
	switch w.Type {
	case string(kernel.EventTurnStart):
		p.doing = "waiting for the model"
	case string(kernel.EventMessageStart):
		if w.Message != nil && w.Message.Role == "assistant" {
			p.text.Reset()
			p.doing = "waiting for the model"
		}
	case string(kernel.EventMessageUpdate):
		p.retry = nil
		switch d := w.Delta; {
		case strings.HasPrefix(d.Kind, "text"):
			p.doing = "writing"
			p.text.WriteString(d.Text)
		case strings.HasPrefix(d.Kind, "thinking"):
			p.doing = "thinking"
		case strings.HasPrefix(d.Kind, "toolcall"):
			if d.Name != "" {
				p.doing = "preparing " + termtext.Visible(d.Name)
			}
		}
	case string(kernel.EventMessageEnd):
		if m := w.Message; m != nil && m.Role == "assistant" {
			if m.Usage != nil {
				p.tokens += m.Usage.Input + m.Usage.Output + m.Usage.CacheRead + m.Usage.CacheWrite
				p.cost += m.Usage.CostUSD
			}
			p.doing = ""
		}
	case wire.TypeRetry:
		p.retry, p.retryAt = w.Retry, p.now().Add(time.Duration(w.Retry.DelayMs)*time.Millisecond)
	case string(kernel.EventToolStart):
		p.running = append(p.running, termtext.Visible(w.Call.Name))
		p.line("⏺ " + callSummary(w.Call))
	case string(kernel.EventToolEnd):
		if i := slices.Index(p.running, termtext.Visible(w.Call.Name)); i >= 0 {
			p.running = slices.Delete(p.running, i, i+1)
		}
		if m := w.Message; m != nil && m.IsError {
			p.line("  ✗ " + termtext.Visible(w.Call.Name) + ": " + oneLine(messageText(m)))
		}
	}
}

// status is the status line's text.
func (p *progress) status() string {
	parts := []string{"rein"}
	if p.turn > 0 {
		parts = append(parts, fmt.Sprintf("turn %d", p.turn))
	}
	switch {
	case p.retry != nil:
		why := "failed"
		if e := p.retry.Error; e != nil {
			why = e.Kind
			if e.Status != 0 {
				why += fmt.Sprintf(" %d", e.Status)
			}
		}
		left := max(0, p.retryAt.Sub(p.now()))
		parts = append(parts, fmt.Sprintf("attempt %d %s, retry in %ds", p.retry.Attempt, termtext.Visible(why), int((left+time.Second-1)/time.Second)))
	case len(p.running) > 0:
		parts = append(parts, "running "+strings.Join(p.running, ", "))
	case p.doing != "":
		parts = append(parts, p.doing)
	}
	parts = append(parts, tokenCount(p.tokens), fmt.Sprintf("$%.4f", p.cost), p.now().Sub(p.start).Truncate(time.Second).String())
	return strings.Join(parts, " · ")
}

// draw writes the status line over the one on the screen (mu held).
func (p *progress) draw() {
	if p.paused || p.stop == nil {
		return
	}
	line := fit(p.status(), p.width()-1)
	if p.drawn && line == p.last {
		return // nothing changed: nothing is written
	}
	fmt.Fprint(p.out, "\r\x1b[K"+line)
	p.drawn, p.last = true, line
}

// clear removes the status line (mu held).
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.out, "\r\x1b[K")
		p.drawn = false
	}
}

// line prints text as a line of its own above the status line (mu held).
func (p *progress) line(text string) {
	p.clear()
	fmt.Fprintln(p.out, fit(text, p.width()-1))
}

// notice wraps a notice function: its line goes above the status line.
func (p *progress) notice(f func(string)) func(string) {
	return func(msg string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.clear()
		f(msg)
		p.draw()
	}
}

// confirm wraps a question asked on the terminal: the status line is taken away while the
// question waits for its answer.
func (p *progress) confirm(f func(string) (bool, error)) func(string) (bool, error) {
	if f == nil {
		return nil
	}
	return func(q string) (bool, error) {
		p.mu.Lock()
		p.clear()
		p.paused = true
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.paused = false
			p.draw()
			p.mu.Unlock()
		}()
		return f(q)
	}
}

// finish stops the ticker and removes the status line. A run that was interrupted leaves the
// text the model was writing (or wrote last) on the screen, before the abort message.
func (p *progress) finish(out *kernel.Outcome, err error) {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.stop = nil
	interrupted := out != nil && out.Status == kernel.StatusAborted || ExitCode(err) == ExitInterrupted
	if text := strings.TrimSpace(p.text.String()); interrupted && text != "" {
		fmt.Fprintf(p.out, "%s\n[interrupted]\n", termtext.Visible(text))
	}
}

// callSummary is a tool call in one line: its name and its main argument.
func callSummary(c *wire.Call) string {
	name := termtext.Visible(c.Name)
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		return name
	}
	for _, k := range []string{"command", "path", "pattern", "url", "query"} {
		if s, ok := args[k].(string); ok && s != "" {
			return name + " " + oneLine(s)
		}
	}
	if len(args) == 0 {
		return name
	}
	return name + " " + oneLine(c.Arguments)
}

// messageText is the text of a message's parts.
func messageText(m *wire.Message) string {
	var b strings.Builder
	for _, part := range m.Content {
		b.WriteString(part.Text)
	}
	return b.String()
}

// oneLine is the first non-empty line of s, made safe to show, with a marker when more
// followed.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	line, rest, _ := strings.Cut(s, "\n")
	line = termtext.Visible(strings.TrimSpace(line))
	if strings.TrimSpace(rest) != "" {
		line += " …"
	}
	return line
}

// fit cuts s to at most width runes.
func fit(s string, width int) string {
	r := []rune(s)
	if width < 1 || len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}

// tokenCount says n tokens briefly (812 tokens, 12.3k tokens).
func tokenCount(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d tokens", n)
	}
	return fmt.Sprintf("%.1fk tokens", float64(n)/1000)
}
