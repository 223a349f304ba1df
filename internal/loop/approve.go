package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/secret"
)

// Approve runs the held action of gate id exactly once, as rein (an approved command
// through the process runner, in the loop's workspace), records the decision with its
// result, and makes the loop ready when no gate is left pending.
func Approve(ctx context.Context, env Env, loopID, gateID, approver string) (exit int, err error) {
	err = withLease(env, loopID, "approve", func(l *ledger.Ledger) error {
		v, g, err := pendingGate(env, loopID, gateID)
		if err != nil {
			return err
		}
		argv, err := actionArgv(g)
		if err != nil {
			return err
		}
		// The approval is recorded before the action starts: a crash during it leaves the
		// record, and the action is never run a second time (settleApprovals).
		if _, err := l.Append(ledger.Entry{Kind: KindGateApproving, Body: approving{ID: g.ID, Approver: approver}}); err != nil {
			return err
		}
		env.crash("gate-action")
		res, err := command.Run(ctx, command.Command{ID: "gate-" + g.ID, Argv: argv, Dir: v.Started.Workspace, Env: verifyEnv})
		env.crash("gate-ran")
		if err != nil {
			d := gateDecision{ID: g.ID, Decision: "approved", Approver: approver, ExitCode: -1, Reason: "the approved action could not start: " + secret.Redact(err.Error())}
			return errors.Join(fmt.Errorf("human gate %s: the approved action could not run: %w", g.ID, err), decided(l, v, d))
		}
		exit = res.ExitCode
		d := gateDecision{ID: g.ID, Decision: "approved", Approver: approver, ExitCode: res.ExitCode, Tail: secret.Redact(lastLines(res.Output, tailLines))}
		return decided(l, v, d)
	})
	return exit, err
}

// Reject records why gate id's action is not run; the reason is the next round's evidence.
func Reject(env Env, loopID, gateID, approver, reason string) error {
	if reason == "" {
		return fmt.Errorf("%w: a rejection needs its reason", ErrInvalidContract)
	}
	return withLease(env, loopID, "reject", func(l *ledger.Ledger) error {
		v, g, err := pendingGate(env, loopID, gateID)
		if err != nil {
			return err
		}
		return decided(l, v, gateDecision{ID: g.ID, Decision: "rejected", Approver: approver, Reason: reason})
	})
}

func pendingGate(env Env, loopID, gateID string) (*view, GateRequest, error) {
	v, err := readView(env.Home, loopID)
	if err != nil {
		return nil, GateRequest{}, err
	}
	if v.State != StateWaitingForHuman {
		return nil, GateRequest{}, fmt.Errorf("%w: loop %s is %s, not waiting for a person", ErrNoGate, loopID, v.State)
	}
	if d := contractDrift(v); d != "" {
		return nil, GateRequest{}, fmt.Errorf("%w: %s", ErrBlocked, d)
	}
	if _, ok := v.Approving[gateID]; ok {
		return nil, GateRequest{}, fmt.Errorf("%w: %s was approved and its action started, but it was interrupted: rein never runs it twice; `rein loop run %s` records that and continues", ErrNoGate, gateID, loopID)
	}
	for _, g := range v.Pending {
		if g.ID == gateID {
			return v, g, nil
		}
	}
	var ids []string
	for _, g := range v.Pending {
		ids = append(ids, g.ID)
	}
	return nil, GateRequest{}, fmt.Errorf("%w: %q (pending: %v)", ErrNoGate, gateID, ids)
}

// decided records d; the last pending gate decided makes the loop ready.
func decided(l *ledger.Ledger, v *view, d gateDecision) error {
	es := []ledger.Entry{{Kind: KindGateDecided, Body: d}}
	if len(v.Pending) == 1 {
		reason := ReasonGateApproved
		if d.Decision == "rejected" {
			reason = ReasonGateRejected
		}
		es = append(es, ledger.Entry{Kind: KindState, Body: stateChange{State: StateReady, Reason: reason, Detail: d.ID}})
	}
	_, err := l.AppendAll(es, nil)
	return err
}

// actionArgv is the held call as the argv rein runs: a bash line through bash -c (the line
// the model wrote, exactly). The gate holds nothing else a round can call; any other call is
// refused, never guessed at.
func actionArgv(g GateRequest) ([]string, error) {
	var a struct {
		Command string `json:"command"`
		ID      string `json:"id"`
	}
	if err := json.Unmarshal(g.Args, &a); err != nil {
		return nil, fmt.Errorf("human gate %s: its recorded call does not decode: %w", g.ID, err)
	}
	switch {
	case g.Tool == policy.ToolBash && a.Command != "":
		return []string{"bash", "-c", a.Command}, nil
	}
	return nil, fmt.Errorf("%w: human gate %s holds a %s call, and approve runs only a held bash line; reject it with its reason", ErrUnsupported, g.ID, g.Tool)
}
