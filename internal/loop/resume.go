package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Record kinds of resuming and of crash safety.
const (
	// KindResumed records the resume steps taken before a round, in order ([ResumeStep]).
	KindResumed = "loop.resumed"
	// KindGateHeld records a call the human gate held, the moment it is held: a crash before
	// the round's end cannot lose it.
	KindGateHeld = "gate.held"
	// KindGateApproving records an approval before its action starts: a crash during the
	// action leaves it, and the action is never run again.
	KindGateApproving = "gate.approving"
)

// ReasonPrecondition: a cheap precondition of the next round failed.
const ReasonPrecondition = "precondition_failed"

// Resume steps, in the loop design's (README, Loops) order; the fifth is the round itself.
const (
	StepTrigger       = "trigger"
	StepArtifacts     = "artifacts"
	StepScope         = "scope"
	StepPreconditions = "preconditions"
)

// ResumeStep is one step taken before a round: its name, whether it held, and what it found.
type ResumeStep struct {
	Step   string `json:"step"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// resumed is the body of loop.resumed.
type resumed struct {
	Round int          `json:"round"` // the round it precedes
	Steps []ResumeStep `json:"steps"`
}

// approving is the body of gate.approving.
type approving struct {
	ID       string `json:"id"`
	Approver string `json:"approver"`
}

// visitResume folds the records of this file into v; it reports whether r was one.
func (v *view) visitResume(r ledger.Record, dec func(any) error) (bool, error) {
	switch r.Kind {
	case KindResumed:
		return true, dec(new(resumed))
	case KindGateHeld:
		var g GateRequest
		if err := dec(&g); err != nil {
			return true, err
		}
		v.Held = append(v.Held, g)
	case KindGateApproving:
		var a approving
		if err := dec(&a); err != nil {
			return true, err
		}
		if v.Approving == nil {
			v.Approving = map[string]string{}
		}
		v.Approving[a.ID] = a.Approver
	case KindRelocked:
		var a Amendment
		if err := dec(&a); err != nil {
			return true, err
		}
		v.applyRelock(a)
	default:
		return false, nil
	}
	return true, nil
}

// prepared is what the resume steps found for the round they precede.
type prepared struct {
	stale     string // why the checkpoint's conclusions were dropped, or ""
	staleTree string // the workspace's tree digest when stale
}

// prepare takes the loop design's (README, Loops) resume steps before round n, in order, and records them (one
// loop.resumed record): the trigger still holds; the outside artifacts match the
// checkpoint's digests (a concurrent change drops the stale conclusions, recorded ready
// stale_context); the open scope and latest failure are loaded; the cheap preconditions
// hold. It reports whether the round may run; a step that fails records the loop blocked.
func prepare(env Env, l *ledger.Ledger, v *view, n int) (prepared, bool, error) {
	var p prepared
	var steps []ResumeStep
	step := func(name string, ok bool, detail string) bool {
		steps = append(steps, ResumeStep{Step: name, OK: ok, Detail: detail})
		return ok
	}
	record := func() error {
		_, err := l.Append(ledger.Entry{Kind: KindResumed, Body: resumed{Round: n, Steps: steps}})
		return err
	}
	if d, ok := triggerHolds(v); !step(StepTrigger, ok, d) {
		return p, false, record()
	}
	d := "no checkpoint yet: nothing to compare"
	if cp := v.Checkpoint; cp != nil && cp.Artifacts != nil {
		cur, err := treeDigest(v.Started.Workspace)
		switch {
		case err != nil:
			d = err.Error()
		case cur != cp.Artifacts["workspace"]:
			p.stale = fmt.Sprintf("the workspace changed outside the loop since round %d's checkpoint (%s, now %s): its conclusions are dropped", cp.Round, cp.Artifacts["workspace"], cur)
			p.staleTree, d = cur, p.stale
		default:
			d = "the workspace matches round " + fmt.Sprint(cp.Round) + "'s checkpoint (" + cur + ")"
		}
	} else if cp != nil {
		d = "the checkpoint keeps no artifact digests (memory.persist leaves artifacts out)"
	}
	step(StepArtifacts, p.stale == "", d)
	step(StepScope, true, scopeOf(v, p.stale != ""))
	pre := preconditions(env, v)
	step(StepPreconditions, pre == "", cmpOr(pre, "the workspace, every verification's program and the goal's delivery run (if any) are there"))
	if err := record(); err != nil {
		return p, false, err
	}
	if p.stale != "" {
		if err := appendState(l, StateReady, ReasonStaleContext, p.stale); err != nil {
			return p, false, err
		}
	}
	if pre != "" {
		return p, false, appendState(l, StateBlocked, ReasonPrecondition, pre+"; fix it, then rein loop run "+v.ID)
	}
	return p, true, nil
}

// triggerHolds says whether the loop's trigger still calls for a round: a manual loop's run
// is its trigger; an every loop's run waited until the round was due. (The watch and webhook
// triggers decide for themselves before the run asks for a round.)
func triggerHolds(v *view) (string, bool) {
	t := v.Started.Trigger
	switch t.Kind {
	case "manual":
		return "manual: rein loop run asked for a round", true
	case "every":
		if v.Rounds == 0 {
			return "every " + t.Every + ": the first round", true
		}
		return fmt.Sprintf("every %s: due since %s", t.Every, v.LastRoundAt.Format(time.RFC3339)), true
	}
	return t.Kind + ": fired", true
}

// scopeOf describes the open scope and the latest failure a round starts from.
func scopeOf(v *view, stale bool) string {
	cp := v.Checkpoint
	if cp == nil {
		return "first round: no open scope, no failure"
	}
	if stale {
		return fmt.Sprintf("round %d's conclusions were dropped (stale); the workspace is looked at afresh", cp.Round)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "from round %d's checkpoint: %d open item(s)", cp.Round, len(cp.OpenItems))
	if cp.NextStep != "" {
		fmt.Fprintf(&b, ", next step %q", cp.NextStep)
	}
	failed := false
	for _, r := range cp.Verification {
		if !r.Passed {
			fmt.Fprintf(&b, "; latest failure %s (%s)", r.ID, r.Fingerprint)
			failed = true
		}
	}
	if !failed {
		b.WriteString("; no failing check")
	}
	return b.String()
}

// preconditions reruns the cheap checks a round needs, and names the first that fails (or
// ""): the workspace is a directory, every verification is a valid approved command whose
// program can be found (as internal/command finds it), and a goal's delivery run can go on.
func preconditions(env Env, v *view) string {
	ws := v.Started.Workspace
	if goalRun(v.Started.Contract) {
		if env.Runs == nil {
			return "the loop's goal is delivery run " + v.Started.Run + ", and this rein has no delivery-run engine"
		}
		if st, err := env.Runs.State(v.Started.Run); err != nil || st.State == "aborted" {
			return fmt.Sprintf("delivery run %s cannot go on (%s, %v)", v.Started.Run, st.State, err)
		}
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return fmt.Sprintf("the workspace %s is not a directory", ws)
	}
	for _, c := range v.Started.Contract.Verification {
		if len(c.Run) == 0 {
			continue
		}
		if err := (command.Command{ID: c.ID, Argv: c.Run, Dir: ws, Env: verifyEnv}).Validate(); err != nil {
			return fmt.Sprintf("verification %s: %s", c.ID, err.Error())
		}
		if !programFound(c.Run[0]) {
			return fmt.Sprintf("verification %s: the program %s is not found (an absolute path, or a name on %s)", c.ID, c.Run[0], command.FixedPath)
		}
	}
	return ""
}

// programFound reports whether internal/command would find prog: an absolute path, or a name
// on its fixed PATH, that is an executable regular file.
func programFound(prog string) bool {
	candidates := []string{prog}
	if !filepath.IsAbs(prog) {
		candidates = nil
		for _, dir := range filepath.SplitList(command.FixedPath) {
			candidates = append(candidates, filepath.Join(dir, prog))
		}
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// closeInterrupted ends the round a crash left open. rein runs the verification on the
// workspace the round left and writes the round's checkpoint and end (one write): the calls
// its gate held (gate.held) make it wait for a person; passing checks complete it; otherwise
// it ends ready, interrupted. A round of a delivery-run goal ends as the run's state says (a
// run that waits for a person makes the loop wait), so the loop's record agrees with the run. The next round thus starts from this checkpoint, never again
// from the one the interrupted round started from, and no held action is lost.
func closeInterrupted(ctx context.Context, env Env, l *ledger.Ledger, v *view) error {
	n := v.Open
	ws := v.Started.Workspace
	end := roundEnd{Round: n, Claim: ClaimNone, Gates: v.Held, Session: fmt.Sprintf("%s-r%d", v.ID, n)}
	end.Verification = verifyAny(ctx, env, v)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cp := Checkpoint{Round: n, ContractDigest: v.Started.ContractDigest, Verification: end.Verification,
		OpenItems: []string{fmt.Sprintf("round %d was interrupted: its report was lost; look at the workspace", n)}}
	if goalRun(v.Started.Contract) && env.Runs != nil {
		// The round may have advanced the run before the crash: the run's own state says how
		// the round ends (a run waiting for a person makes the loop wait), as in runGoalRound.
		st, err := env.Runs.State(v.Started.Run)
		if err != nil {
			return fmt.Errorf("delivery run %s: %w", v.Started.Run, err)
		}
		cp.RootCauses = goalEnd(v, n, st, nil, &end)
		cp.CompletedScope = fmt.Sprintf("delivery run %s: at %s after the interrupted round", v.Started.Run, st.Stage)
		cp.NextStep = goalNext(v.Started.Run, st)
	} else {
		rule := v.Started.Contract.Failure
		cp.RootCauses = rootCauses(v.Ends, n, end.Verification)
		end.State, end.Reason, end.Detail = decide(outcome{Gates: end.Gates, Verification: end.Verification, Claim: ClaimNone,
			Repeated: repeated(cp.RootCauses, rule, n), Rule: rule})
	}
	const why = "the process ended before the round did; rein ran the verification on the workspace it left"
	switch end.Reason {
	case ReasonVerificationFailed:
		end.Reason, end.Detail = ReasonInterrupted, why+": "+end.Detail
	default:
		end.Detail = strings.TrimPrefix(why+"; "+end.Detail, "; ")
	}
	if d, err := treeDigest(ws); err == nil {
		cp.Artifacts = map[string]string{"workspace": d}
	}
	cp.filter(v.Started.Contract.Persist)
	env.crash("interrupted-verified")
	body, err := cp.scanned()
	if err != nil {
		end.State, end.Reason, end.Detail = StateBlocked, ReasonCheckpointSecret, err.Error()
		_, aerr := l.Append(ledger.Entry{Kind: KindRoundEnd, Body: end})
		return aerr
	}
	_, err = l.AppendAll([]ledger.Entry{{Kind: KindCheckpoint, Body: body}, {Kind: KindRoundEnd, Body: end}}, nil)
	return err
}

// settleApprovals records, for every approval whose action started but whose decision was
// never recorded (a crash during the action), that it was approved and interrupted: the
// action may have taken effect, so rein never runs it again; the next round's evidence says
// so.
func settleApprovals(l *ledger.Ledger, v *view) error {
	for _, g := range v.Pending {
		who, ok := v.Approving[g.ID]
		if !ok {
			continue
		}
		d := gateDecision{ID: g.ID, Decision: "approved", Approver: who, ExitCode: -1,
			Reason: "the approval's action was interrupted (the process ended while it ran): it may have taken effect, and rein does not run it again; check its effect"}
		if err := decided(l, v, d); err != nil {
			return err
		}
		v.Pending = dropGate(v.Pending, g.ID)
		delete(v.Approving, g.ID)
		if len(v.Pending) == 0 {
			v.State, v.Reason = StateReady, ReasonGateApproved
		}
	}
	return nil
}

func dropGate(gs []GateRequest, id string) []GateRequest {
	var out []GateRequest
	for _, g := range gs {
		if g.ID != id {
			out = append(out, g)
		}
	}
	return out
}

// recordingGate records every call the round's human gate holds the moment it is held.
type recordingGate struct {
	*humanGate
	l    *ledger.Ledger
	mu   sync.Mutex
	seen int
}

// Check implements kernel.Gate.
func (g *recordingGate) Check(ctx context.Context, call *llm.ToolCall, spec tool.Spec, args json.RawMessage) error {
	err := g.humanGate.Check(ctx, call, spec, args)
	g.mu.Lock()
	defer g.mu.Unlock()
	held := g.requests()
	for ; g.seen < len(held); g.seen++ {
		if _, aerr := g.l.Append(ledger.Entry{Kind: KindGateHeld, Body: held[g.seen]}); aerr != nil && err == nil {
			err = aerr
		}
	}
	return err
}
