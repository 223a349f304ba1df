package command

import (
	"context"
	"errors"
	"time"

	"github.com/reinhq/rein/internal/hooks"
)

// Notification is Claude Code's Notification event. It is not a kernel point: the composition
// root fires it through [Runner.Notify] when rein waits for the user.
const Notification = "Notification"

// Notification types rein sends (Claude Code's notification_type values).
const (
	// NotificationPermissionPrompt: a permission prompt (an "ask" rule or a PreToolUse
	// hook's "ask") waits for the user's answer.
	NotificationPermissionPrompt = "permission_prompt"
)

// PointNotification names Notification hook runs in records.
const PointNotification hooks.Point = "notification"

// Notify runs the Notification hooks whose matcher matches typ, one after another, with
// message (and title, when not "") in their input, as Claude Code fires Notification. Nothing
// they answer decides anything (exit status 2 included, as in Claude Code); a hook that fails
// is a notice, never an error. Each run is passed to report when it is not nil.
func (r *Runner) Notify(ctx context.Context, typ, title, message string, report func(hooks.Run)) {
	for _, g := range r.Config[Notification] {
		re, err := compile(g.Matcher)
		if err != nil || re != nil && !re.MatchString(typ) {
			continue
		}
		for _, h := range g.Hooks {
			if h.skip || h.If != "" {
				continue
			}
			in := r.input(Notification)
			in.Message, in.Title, in.NotificationType = message, title, typ
			start := time.Now()
			_, err := r.call(ctx, h, in)
			run := hooks.Run{Hook: h.Name(), Point: PointNotification, Outcome: hooks.OutcomeOK, Duration: time.Since(start)}
			if err != nil {
				run.Outcome, run.Err, run.Detail = hooks.OutcomeFailed, err, "error"
				var re *RunError
				if errors.As(err, &re) {
					run.Detail = re.HookDetail()
				}
				r.notice("hook %s failed (ignored: a Notification hook decides nothing): %v", h.Name(), err)
			}
			if report != nil {
				report(run)
			}
		}
	}
}
