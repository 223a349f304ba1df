package system

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
)

// hookWiring makes the hooks of each agent a runtime creates: the command hooks of the
// settings (global, then the project's when it is trusted), run in the project directory, each
// run recorded in the agent's session, failures and hook messages told to the user through
// Options.Notice. Build wires the top-level agent with it; an agent for another session (a
// sub-agent's) gets its own hooks from the same wiring (forAgent), so hooks fire for every
// session a run creates.
type hookWiring struct {
	config command.Config
	// dir is the project root (the commands' directory); cwd the workspace.
	dir, cwd string
	confirm  func(question string) (bool, error)
	notice   func(string)
	// env is the commands' environment (nil: rein's): rein's with the settings' env over it.
	env []string
	// envFile is CLAUDE_ENV_FILE for SessionStart hooks ("": none, see sessionEnv).
	envFile string
	// permissionMode is the hooks' permission_mode ("": "default", or "dontAsk" without
	// confirm).
	permissionMode string
	// main is the runner of the top-level agent and mainSession its session: Notification
	// hooks run through it (see notifying).
	main        *command.Runner
	mainSession *session.Session
}

// forAgent returns the hooks of an agent recorded in s (nil: not recorded); nil when no hooks
// are configured. resumed says the session existed before (SessionStart's source).
func (w *hookWiring) forAgent(s *session.Session, resumed bool, model string) (kernel.Hooks, error) {
	if w == nil || len(w.config) == 0 {
		return nil, nil
	}
	r := &command.Runner{Config: w.config, Dir: w.dir, Cwd: w.cwd, Model: model, Source: command.SourceStartup,
		Notice: w.notice, PermissionMode: cmp.Or(w.permissionMode, "default"), Env: w.env, EnvFile: w.envFile}
	if w.confirm != nil {
		r.Confirm = func(q string) (bool, error) {
			notifyPermission(r, s, w, q)
			return w.confirm(q)
		}
	} else if w.permissionMode == "" {
		// Nobody can be asked: an ask rule or hook refuses the call, as in Claude Code's
		// dontAsk mode.
		r.PermissionMode = "dontAsk"
	}
	if w.main == nil {
		w.main, w.mainSession = r, s
	}
	if resumed {
		r.Source = command.SourceResume
	}
	if s != nil {
		// transcript_path is a Claude Code transcript derived from the ledger, rewritten
		// before each hook runs; the ledger stays the record of truth.
		tr := &command.Transcript{Path: filepath.Join(s.Dir(), command.TranscriptFile), SessionID: s.ID(), Cwd: w.cwd, Version: "rein"}
		r.SessionID, r.TranscriptPath = s.ID(), tr.Path
		r.Sync = func(pending *llm.Message) error {
			msgs := s.Context()
			if pending != nil && (pending.ID == "" || len(msgs) == 0 || msgs[len(msgs)-1].ID != pending.ID) {
				msgs = append(msgs, *pending)
			}
			return tr.Write(msgs)
		}
	}
	reg := hooks.New(hooks.Options{Report: func(run hooks.Run) { w.report(s, run) }})
	if err := r.Register(reg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return reg, nil
}

// notifyPermission fires the Notification hooks of r (recorded in s) for a permission
// prompt about to ask question.
func notifyPermission(r *command.Runner, s *session.Session, w *hookWiring, question string) {
	msg := "rein needs your permission"
	if tool, _, ok := strings.Cut(strings.TrimPrefix(question, "rein: "), " wants to run"); ok && tool != "" && !strings.ContainsAny(tool, " \n") {
		msg += " to use " + command.ClaudeName(tool)
	}
	r.Notify(context.Background(), command.NotificationPermissionPrompt, "rein", msg, func(run hooks.Run) { w.report(s, run) })
}

// notifying returns confirm and approve (either may be nil) firing the top-level agent's
// Notification hooks (permission_prompt) before they wait for the user.
func (w *hookWiring) notifying(confirm func(string) (bool, error), approve func(context.Context, Approval) (Answer, error)) (func(string) (bool, error), func(context.Context, Approval) (Answer, error)) {
	if w == nil || w.main == nil || len(w.config[command.Notification]) == 0 {
		return confirm, approve
	}
	if confirm != nil {
		inner := confirm
		confirm = func(q string) (bool, error) {
			notifyPermission(w.main, w.mainSession, w, q)
			return inner(q)
		}
	}
	if approve != nil {
		inner := approve
		approve = func(ctx context.Context, a Approval) (Answer, error) {
			w.main.Notify(ctx, command.NotificationPermissionPrompt, "rein", "rein needs your permission to use "+command.ClaudeName(a.Tool), func(run hooks.Run) { w.report(w.mainSession, run) })
			return inner(ctx, a)
		}
	}
	return confirm, approve
}

// report records a hook run in the session — name, point, outcome, duration, never a payload —
// and tells the user of a failure.
func (w *hookWiring) report(s *session.Session, run hooks.Run) {
	if s != nil {
		err := s.RecordHook(session.HookRun{Hook: run.Hook, Point: string(run.Point), Outcome: string(run.Outcome),
			FailClosed: run.FailClosed, DurationMs: run.Duration.Milliseconds(), Detail: run.Detail})
		// A ledger that cannot be written is faulted: the run's next write fails and stops it.
		if err != nil && w.notice != nil {
			w.notice(fmt.Sprintf("recording hook %s: %v", run.Hook, err))
		}
	}
	if run.Outcome == hooks.OutcomeFailed && w.notice != nil {
		mode := "ignored: it fails open"
		if run.FailClosed {
			mode = "it fails closed"
		}
		w.notice(fmt.Sprintf("hook %s failed (%s): %v", run.Hook, mode, run.Err))
	}
}
