package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/llm"
)

// IntentCompaction announces a compaction: a summarization request whose result is recorded as
// a compaction entry.
const IntentCompaction IntentKind = "compaction"

// CompactionInfo marks an entry as a compaction summary: the model's context becomes this
// entry's message followed by the entries from FirstKeptID on. The transcript before it stays
// recorded.
type CompactionInfo struct {
	FirstKeptID  string `json:"firstKeptId"`
	TokensBefore int    `json:"tokensBefore"`
}

// Compactor shrinks a context that no longer fits the model's window.
type Compactor interface {
	// Needed reports whether msgs must be compacted before the next request.
	Needed(msgs []llm.Message) bool
	// Compact summarizes a prefix of msgs and returns the summary message, the index of the
	// first message kept verbatim, the estimated tokens before, and the summarization usage.
	Compact(ctx context.Context, msgs []llm.Message, instructions string) (summary llm.Message, firstKept, tokensBefore int, usage llm.Usage, err error)
}

// ContextHook may replace the message list sent to the model (not the recorded conversation).
// It must not modify msgs in place. It is package hooks' interface, so one implementation also
// registers as a context hook of a hooks.Registry.
type ContextHook = hooks.ContextHook

// ErrCompactionFailed wraps a compaction that could not be done; the context is unchanged.
var ErrCompactionFailed = errors.New("compaction failed")

// EventCompaction is emitted after a compaction, with the summary as Message.
const EventCompaction EventType = "compaction"

// compact summarizes the run's context, records the compaction (intent, then the summary entry
// naming the first kept entry) and replaces the context. A failed compaction closes its intent
// with no entry and leaves the context as it was.
func (r *run) compact(turn int, instructions string) error {
	cfg := &r.cfg
	r.lineage = nil // the context is replaced (and before_compact hooks see it)
	supplied, err := r.beforeCompact(turn, instructions)
	if err != nil {
		return err
	}
	id := cfg.NewID()
	intent := Intent{ID: cfg.NewID(), Kind: IntentCompaction, Turn: turn, Reserved: []string{id}}
	if err := r.intend(intent); err != nil {
		return err
	}
	var (
		summary           llm.Message
		firstKept, before int
		usage             llm.Usage
	)
	if supplied != nil { // a before_compact hook wrote the summary
		summary, firstKept, before = *supplied.Summary, supplied.FirstKept, supplied.TokensBefore
	} else {
		summary, firstKept, before, usage, err = cfg.Compactor.Compact(r.ctx, r.context, instructions)
		r.out.Usage.Add(usage)
	}
	if err == nil && (firstKept <= 0 || firstKept >= len(r.context) || r.context[firstKept].ID == "") {
		err = fmt.Errorf("compactor kept message %d of %d, which has no recorded id", firstKept, len(r.context))
	}
	if err != nil {
		if serr := r.settle(Settlement{IntentID: intent.ID}); serr != nil {
			return serr
		}
		return fmt.Errorf("%w: %w", ErrCompactionFailed, err)
	}
	summary.ID = id
	info := &CompactionInfo{FirstKeptID: r.context[firstKept].ID, TokensBefore: before}
	if err := r.settle(Settlement{IntentID: intent.ID, Entries: []Entry{{ID: id, Message: summary, Compaction: info}}, Usage: &usage}); err != nil {
		return err
	}
	r.context = append([]llm.Message{summary}, r.context[firstKept:]...)
	cfg.Observe(Event{Type: EventCompaction, Turn: turn, Message: &summary, Compaction: info})
	return nil
}

// Compact compacts history outside a run (manual compaction), recording it like an automatic
// one. It returns the new context.
func (a *Agent) Compact(ctx context.Context, history []llm.Message, instructions string) ([]llm.Message, error) {
	if a.cfg.Compactor == nil {
		return nil, fmt.Errorf("%w: no compactor configured", ErrCompactionFailed)
	}
	if _, err := a.sessionStart(ctx); err != nil {
		return nil, err
	}
	r := &run{Agent: a, ctx: ctx, out: &Outcome{}}
	r.context = append([]llm.Message(nil), history...)
	if err := r.compact(0, instructions); err != nil {
		return nil, err
	}
	return r.context, nil
}
