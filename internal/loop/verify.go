package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/secret"
)

// verifyEnv are the variables a check gets from rein's environment (internal/command's
// allowlist; never one that changes what programs run).
var verifyEnv = []string{"HOME", "TMPDIR", "LANG", "GOCACHE", "GOPATH", "GOMODCACHE"}

// verifyTimeout bounds one check.
const verifyTimeout = 10 * time.Minute

// tailLines is how many output lines a result keeps as evidence.
const tailLines = 20

// verify runs every check of the contract in the workspace, as rein's approved commands (no
// shell, the process runner). A check that cannot start fails with its reason.
func verify(ctx context.Context, checks []Verification, workspace string) []VerificationResult {
	out := make([]VerificationResult, 0, len(checks))
	for _, c := range checks {
		res, err := command.Run(ctx, command.Command{ID: c.ID, Argv: c.Run, Dir: workspace, Env: verifyEnv, Timeout: verifyTimeout})
		r := VerificationResult{ID: c.ID, ExitCode: res.ExitCode}
		text := res.Output
		switch {
		case err != nil:
			r.ExitCode, text = -1, err.Error()
		case res.TimedOut:
			text += "\n(timed out)"
		}
		r.Passed = err == nil && res.ExitCode == 0 && !res.TimedOut && !res.Canceled
		if !r.Passed {
			r.Fingerprint, r.Signature = Fingerprint(c.ID, r.ExitCode, text)
			r.Tail = secret.Redact(lastLines(text, tailLines))
		}
		out = append(out, r)
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// allPassed reports whether every check passed.
func allPassed(rs []VerificationResult) bool {
	for _, r := range rs {
		if !r.Passed {
			return false
		}
	}
	return len(rs) > 0
}

// rootCauses folds the failed checks of every ended round, plus this one's, into root
// causes by fingerprint.
func rootCauses(ends []roundEnd, round int, now []VerificationResult) []RootCause {
	var out []RootCause
	add := func(n int, r VerificationResult) {
		if r.Passed {
			return
		}
		for i := range out {
			if out[i].Fingerprint == r.Fingerprint {
				out[i].Rounds = append(out[i].Rounds, n)
				return
			}
		}
		out = append(out, RootCause{Fingerprint: r.Fingerprint, Check: r.ID, Signature: r.Signature, Rounds: []int{n}})
	}
	for _, e := range ends {
		for _, r := range e.Verification {
			add(e.Round, r)
		}
	}
	for _, r := range now {
		add(round, r)
	}
	return out
}

// repeated returns the root cause that meets the failure rule in round, or nil.
func repeated(causes []RootCause, rule FailureRule, round int) *RootCause {
	for i, c := range causes {
		if len(c.Rounds) == 0 || c.Rounds[len(c.Rounds)-1] != round {
			continue
		}
		n := len(c.Rounds)
		if rule.InARow {
			n = 1
			for j := len(c.Rounds) - 1; j > 0 && c.Rounds[j-1] == c.Rounds[j]-1; j-- {
				n++
			}
		}
		if n >= rule.SameRootCause {
			return &causes[i]
		}
	}
	return nil
}

// describeCause is a root cause in one line.
func describeCause(c *RootCause, rule FailureRule) string {
	row := ""
	if rule.InARow {
		row = " in a row"
	}
	return fmt.Sprintf("%s failed with root cause %s (%s) in rounds %v: the contract stops after %d%s", c.Check, c.Fingerprint, strings.Join(c.Signature, "; "), c.Rounds, rule.SameRootCause, row)
}
