package session

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Replayer re-runs tool calls during recovery.
type Replayer interface {
	// ReplaySafe reports whether the named tool is declared replay-safe now.
	ReplaySafe(name string) bool
	// Replay runs call again and returns its result message.
	Replay(ctx context.Context, call *llm.ToolCall) llm.Message
}

// Recovery actions.
const (
	Replayed    = "replayed"    // a safe tool call was run again
	Interrupted = "interrupted" // a tool call got a synthetic "interrupted" result
	Aborted     = "aborted"     // a cancelled call got an "aborted" result
	Retry       = "retry"       // a model call was abandoned; the next run retries it
	GaveUp      = "gave-up"     // a model call's last attempt was interrupted: synthetic error message; it stays given up
	RunClosed   = "run-closed"  // an open run was ended as interrupted
	NotStarted  = "not-started" // a call that never started got a result saying so
)

// Action is one thing recovery did.
type Action struct {
	Intent string
	Kind   kernel.IntentKind
	Call   *llm.ToolCall
	Action string
}

func (a Action) String() string {
	if a.Call != nil {
		return fmt.Sprintf("%s call %s (%s): %s", a.Kind, a.Call.ID, a.Call.Name, a.Action)
	}
	if a.Kind == "" {
		return a.Action
	}
	return fmt.Sprintf("%s: %s", a.Kind, a.Action)
}

// InterruptedText is the result a never-replayed tool call gets after a crash.
const InterruptedText = "Tool call %q was interrupted: rein stopped before its result was recorded, so whether it took effect is unknown. Check the current state before running it again."

// NotStartedText is the result of a call that rein stopped before starting.
const NotStartedText = "Tool call %q was not executed: rein stopped before starting it. Issue it again if it is still needed."

// GaveUpText is the error of a model call whose last allowed attempt a crash interrupted.
const GaveUpText = "the model call was interrupted at its last attempt (%d attempts made; its retry policy allows %d)"

// AbortedText is the result a cancelled tool call gets.
const AbortedText = "Tool call %q was aborted by the user before its result was recorded."

// Recover settles every open intent of the lane exactly once and ends an open run, writing one
// record per action. It returns what it did; running it again finds nothing to do.
func (s *Session) Recover(ctx context.Context, rp Replayer) ([]Action, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var done []Action
	for _, in := range s.st.openIntents(s.lane) {
		a := Action{Intent: in.ID, Kind: in.Kind, Call: in.Call}
		var err error
		switch in.Kind {
		case kernel.IntentToolCall:
			var res llm.Message
			switch {
			case in.Cancelled:
				res, a.Action = llm.ToolResultText(in.Call, fmt.Sprintf(AbortedText, in.Call.Name), true), Aborted
			case in.Replay == tool.ReplaySafe && rp != nil && rp.ReplaySafe(in.Call.Name):
				res, a.Action = rp.Replay(ctx, in.Call), Replayed
				res.ToolCallID, res.ToolName = in.Call.ID, in.Call.Name
			default:
				res, a.Action = llm.ToolResultText(in.Call, fmt.Sprintf(InterruptedText, in.Call.Name), true), Interrupted
			}
			err = s.addEntry(in.Reserved[0], in.ID, res, entryExtra{})
		case kernel.IntentCompaction:
			a.Action = ActionAbandoned
			err = s.append(ledger.Entry{Kind: KindClosed, Body: closedBody{Intent: in.ID, Action: ActionAbandoned,
				Reason: "interrupted; the context is compacted again when it next needs to be"}})
		case kernel.IntentModelCall:
			attempts, maxAttempts := s.st.attempts(in)
			switch {
			case in.Cancelled:
				a.Action = Aborted
				m := llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindAborted, Message: "the model call was aborted by the user"})
				err = s.addEntry(in.Reserved[0], in.ID, *m, entryExtra{})
			case attempts < maxAttempts:
				a.Action = Retry
				err = s.append(ledger.Entry{Kind: KindClosed, Body: closedBody{Intent: in.ID, Action: ActionRetry,
					Reason: fmt.Sprintf("interrupted at attempt %d of %d", attempts, maxAttempts)}})
			default:
				a.Action = GaveUp
				m := llm.Fail(&llm.Message{}, &llm.Error{Kind: llm.KindNetwork,
					Message: fmt.Sprintf(GaveUpText, attempts, maxAttempts)})
				err = s.addEntry(in.Reserved[0], in.ID, *m, entryExtra{})
			}
		}
		if err != nil {
			return done, err
		}
		done = append(done, a)
	}
	// Calls of the last assistant message that never got an intent never started.
	if last := s.st.Entries[s.st.lastAsst[s.lane]]; last != nil && last.ID == s.st.lane(s.lane).Leaf && !last.Message.Failed() {
		answered := map[string]bool{}
		for _, r := range s.st.results[last.ID] {
			answered[r.Message.ToolCallID] = true
		}
		for _, c := range last.Message.ToolCalls() {
			if answered[c.ID] {
				continue
			}
			res := llm.ToolResultText(c, fmt.Sprintf(NotStartedText, c.Name), true)
			if err := s.addEntry(s.newID(), "", res, entryExtra{}); err != nil {
				return done, err
			}
			done = append(done, Action{Kind: kernel.IntentToolCall, Call: c, Action: NotStarted})
		}
	}
	if s.st.lane(s.lane).RunOpen {
		if err := s.append(ledger.Entry{Kind: KindRun, Body: runBody{Lane: s.lane, Event: RunEnd, Status: "interrupted"}}); err != nil {
			return done, err
		}
		done = append(done, Action{Action: RunClosed})
	}
	return done, nil
}

// attempts returns how many attempts the logical call of the open model-call intent in has
// made, counted from the ledger (in and its attempt records included), and its limit: the
// policy recorded with in (the call's, as its first attempt recorded it). Ledgers where
// entries were recorded in the lane while in was open count from in's own numbers.
func (st *State) attempts(in *Intent) (attempts, maxAttempts int) {
	l := st.lane(in.Lane)
	attempts, maxAttempts = max(l.Attempts, in.LastAttempt), l.Policy
	if in.Retry != nil {
		maxAttempts = in.Retry.MaxAttempts
	}
	return attempts, max(1, maxAttempts)
}

// Pending reports whether the lane's conversation waits for a model turn: it ends with a user
// message or tool results (after a crash, an abort or a budget stop).
func (s *Session) Pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.st.context(s.st.lane(s.lane).Leaf)
	if len(msgs) == 0 {
		return false
	}
	last := msgs[len(msgs)-1]
	if last.Role == llm.RoleAssistant {
		if last.Failed() {
			return true
		}
		// An assistant message whose calls have no results yet waits for them, not for the model.
		return false
	}
	return true
}
