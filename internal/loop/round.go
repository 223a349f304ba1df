package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/secret"
	"github.com/reinhq/rein/internal/tool"
)

// RequestPrefix starts every round's first request.
const RequestPrefix = "# rein loop round"

// roundSystem is every round's system prompt.
const roundSystem = `You work one round of an external loop that rein runs. The request gives the loop's
control contract, its latest checkpoint and this round's evidence; nothing else of earlier rounds
exists. Work toward the goal within the contract, then call ` + ReportTool + ` once with your claim,
summary, open items and next step, and stop. rein runs the contract's verification itself after
the round: your claim is recorded, never trusted. Actions the contract's human gate names are held
for a person: when one is refused, do not retry or work around it.`

// runRound runs round n+1: its record, a fresh session, rein's verification, the next state
// chosen by decide, the checkpoint and the round's end (one write).
func runRound(ctx context.Context, env Env, l *ledger.Ledger, v *view, p prepared) (string, error) {
	n := v.Rounds + 1
	ws := v.Started.Workspace
	stale := p.stale
	key := roundKey(v, p.staleTree)
	if refused, err := refuseRetry(l, v, key, n); err != nil || refused {
		return StateBlocked, err
	}
	env.crash("round-start")
	if _, err := l.Append(ledger.Entry{Kind: KindRoundStart, Body: roundStart{Round: n, Key: &key}}); err != nil {
		return "", err
	}
	hg, err := newHumanGate(v.Started.Contract.RequiredFor, ws, n)
	if err != nil {
		return "", err
	}
	gate := &recordingGate{humanGate: hg, l: l}
	env.crash("session")
	rep := &reportTool{}
	sid := fmt.Sprintf("%s-r%d", v.ID, n)
	sdir := filepath.Join(loopDir(env.Home, v.ID), "rounds", fmt.Sprint(n))
	spec := agentspec.Spec{Role: "default", Workspace: ws, Model: v.Started.Model.spec(), SessionDir: sdir, SessionID: sid,
		System: roundSystem, Tools: []tool.Tool{rep}, Gate: gate, LedgerFS: env.SessionFS, Now: env.Now}
	if left := v.Budget.Tokens - v.Tokens; v.Budget.Tokens > 0 {
		spec.MaxUsageTokens = left
	}
	start := env.now()
	end := roundEnd{Round: n, Session: sid}
	modelErr := runAgent(ctx, env, spec, request(v, n, stale), &end)
	if ctx.Err() != nil {
		return "", ctx.Err() // the round stays open; the next run closes it as interrupted
	}
	end.ElapsedMs = env.now().Sub(start).Milliseconds()
	r := rep.result()
	end.Claim = r.Claim
	end.Gates = gate.requests()
	env.crash("verify")
	end.Verification = verify(ctx, v.Started.Contract.Verification, ws)
	env.crash("verified")
	causes := rootCauses(v.Ends, n, end.Verification)
	rule := v.Started.Contract.Failure
	end.State, end.Reason, end.Detail = decide(outcome{Gates: end.Gates, Verification: end.Verification, Claim: r.Claim,
		ModelErr: modelErr, Repeated: repeated(causes, rule, n), Rule: rule})
	cp := Checkpoint{Round: n, ContractDigest: v.Started.ContractDigest, CompletedScope: r.Summary, Decisions: r.Decisions,
		Verification: end.Verification, RootCauses: causes, OpenItems: r.OpenItems, NextStep: r.NextStep}
	return endRound(env, l, v, ws, cp, end)
}

// endRound records how a round ended: the checkpoint (with the workspace's digest, filtered
// by memory.persist and scanned for secrets) and the round's end in one write. A checkpoint
// the scanner refuses is never written: the round ends blocked checkpoint_secret instead.
func endRound(env Env, l *ledger.Ledger, v *view, ws string, cp Checkpoint, end roundEnd) (string, error) {
	if d, err := treeDigest(ws); err == nil {
		cp.Artifacts = map[string]string{"workspace": d}
	}
	cp.filter(v.Started.Contract.Persist)
	body, err := cp.scanned()
	if err != nil {
		end.State, end.Reason, end.Detail = StateBlocked, ReasonCheckpointSecret, err.Error()
		_, aerr := l.Append(ledger.Entry{Kind: KindRoundEnd, Body: end})
		return end.State, aerr
	}
	_, err = l.AppendAll([]ledger.Entry{{Kind: KindCheckpoint, Body: body}, {Kind: KindRoundEnd, Body: end}}, nil)
	env.crash("ended")
	return end.State, err
}

// runAgent runs the round's session; the returned error is a model failure the round ends
// blocked with (an error of rein itself is returned too: the round is then model_failed,
// never a success).
func runAgent(ctx context.Context, env Env, spec agentspec.Spec, req string, end *roundEnd) error {
	agent, err := env.Agents.Agent(ctx, spec)
	if err != nil {
		return fmt.Errorf("building the round's agent: %w", err)
	}
	defer agent.Close()
	out, err := agent.Run(ctx, llm.UserText(req))
	if out != nil {
		u := out.Usage
		end.Tokens = u.Input + u.CacheRead + u.CacheWrite + u.Output
		end.CostUSD = u.Cost.Total
	}
	if err != nil && !errors.As(err, new(*kernel.BudgetError)) {
		return errors.New(secret.Redact(err.Error()))
	}
	return nil
}

// request is a round's first request: the contract, the latest checkpoint and this round's
// evidence — never an earlier round's transcript.
func request(v *view, n int, stale string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d of loop %s\n\n## Control contract (digest %s)\n\n```json\n%s\n```\n", RequestPrefix, n, v.ID, v.Started.ContractDigest, v.Started.Contract.JSON())
	b.WriteString("\n## Latest checkpoint\n\n")
	switch {
	case v.Checkpoint == nil:
		b.WriteString("None: this is the first round.\n")
	case stale != "":
		fmt.Fprintf(&b, "Stale: %s. Look at the workspace afresh.\n", stale)
	default:
		data, _ := json.MarshalIndent(v.Checkpoint, "", "  ")
		fmt.Fprintf(&b, "```json\n%s\n```\n", data)
	}
	b.WriteString("\n## Evidence for this round\n\n")
	wrote := false
	if e := v.LastEnd; e != nil && stale == "" {
		for _, r := range e.Verification {
			if !r.Passed {
				fmt.Fprintf(&b, "- verification %s failed (exit %d, root cause %s):\n```\n%s\n```\n", r.ID, r.ExitCode, r.Fingerprint, r.Tail)
				wrote = true
			}
		}
		if e.Reason == ReasonClaimContradicted {
			b.WriteString("- the last round reported done, but verification failed: the claim did not count.\n")
			wrote = true
		}
	}
	for _, d := range v.Decisions {
		fmt.Fprintf(&b, "- human gate %s was %s by %s", d.ID, d.Decision, d.Approver)
		if d.Decision == "approved" {
			fmt.Fprintf(&b, "; rein ran the action once (exit %d)", d.ExitCode)
		}
		if d.Reason != "" {
			fmt.Fprintf(&b, "; reason: %s", d.Reason)
		}
		b.WriteString(".\n")
		wrote = true
	}
	if !wrote {
		b.WriteString("None.\n")
	}
	fmt.Fprintf(&b, "\n## Rules\n\nFinish with %s. Verification: %s.\n", ReportTool, verificationList(v.Started.Contract.Verification))
	return b.String()
}

func verificationList(vs []Verification) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.ID+" ("+strings.Join(v.Run, " ")+")")
	}
	return strings.Join(s, ", ")
}
