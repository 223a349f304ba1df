package session

import (
	"github.com/reinhq/rein/internal/ledger"
)

// KindHook records one hook run. It is an audit record that no state depends on, so its kind
// is skippable ("x-"): a reader that does not know it, an older rein, skips it.
const KindHook = "x-hook"

// HookRun is one hook run as recorded: which hook, at which point, what it decided and how
// long it took. It holds no payload — not what the hook was given, printed or returned, which
// may hold secrets — only the hook's name (for command hooks, its position in the settings,
// never its command line) and a payload-free Detail for failures.
type HookRun struct {
	Lane string `json:"lane"`
	// Hook names the hook; Point is the kernel hook point (hooks.Point).
	Hook  string `json:"hook"`
	Point string `json:"point"`
	// Outcome is ok, changed, blocked, stopped or failed (hooks.Outcome).
	Outcome    string `json:"outcome"`
	FailClosed bool   `json:"failClosed,omitempty"`
	DurationMs int64  `json:"durationMs"`
	// Detail names a failure: "exit status 1", "timeout", "invalid output", "panic"...
	Detail string `json:"detail,omitempty"`
}

// RecordHook appends a hook run record. It is written at once, also mid-turn: it changes no
// context, so it needs no turn boundary. As an audit record nothing acts on, it rides on the
// next fsync (the next intent's, the run's end).
func (s *Session) RecordHook(h HookRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Lane = s.lane
	return s.append(ledger.Entry{Kind: KindHook, Body: h, NoSync: true})
}
