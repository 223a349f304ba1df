package loop

import (
	"fmt"
	"strings"
)

// outcome is what a round produced, as code sees it.
type outcome struct {
	Gates        []GateRequest
	Verification []VerificationResult
	Claim        string
	ModelErr     error
	Repeated     *RootCause
	Rule         FailureRule
}

// decide chooses a round's next state from the loop design's (README, Loops) table, in this order: a held human
// gate (the checkpoint is frozen before the side effect); a model that could not work
// (unrecoverable); every check passing (the goal proven); the failure rule met (a stop
// condition); else a recoverable failure. A model's claim never decides: a claim of done
// with failing checks is recorded as contradicted.
func decide(o outcome) (state, reason, detail string) {
	switch {
	case len(o.Gates) > 0:
		var names []string
		for _, g := range o.Gates {
			names = append(names, fmt.Sprintf("%s: %s %q", g.ID, g.Class, g.Part))
		}
		return StateWaitingForHuman, ReasonHumanGate, strings.Join(names, "; ")
	case o.ModelErr != nil:
		return StateBlocked, ReasonModelFailed, o.ModelErr.Error()
	case allPassed(o.Verification):
		return StateCompleted, ReasonVerificationPassed, ""
	case o.Repeated != nil:
		return StateBlocked, ReasonSameRootCause, describeCause(o.Repeated, o.Rule)
	case o.Claim == ClaimDone:
		return StateReady, ReasonClaimContradicted, "the model reported done, but " + failing(o.Verification)
	}
	return StateReady, ReasonVerificationFailed, failing(o.Verification)
}

func failing(rs []VerificationResult) string {
	var f []string
	for _, r := range rs {
		if !r.Passed {
			f = append(f, fmt.Sprintf("%s (exit %d, %s)", r.ID, r.ExitCode, r.Fingerprint))
		}
	}
	return "verification failed: " + strings.Join(f, ", ")
}
