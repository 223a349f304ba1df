package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/tool"
)

// KindStageAttempt is the ledger record of one settled model-stage attempt.
const KindStageAttempt = "stage.attempt"

// ArtResearch is the artifact id (and file name) of the accepted Research contract.
const ArtResearch = "research"

// MaxStageAttempts bounds the attempts of one model stage; the role's turn budget bounds them
// too (each attempt may use what the earlier ones left).
const MaxStageAttempts = 3

// BlockStageFailed: a model stage used its attempts or its budget without an accepted
// contract.
const BlockStageFailed = "run_stage_failed"

// BlockBudgetExhausted: the role's budget (model turns, tokens or elapsed time, summed over
// every recorded attempt of the role's stages) is used up.
const BlockBudgetExhausted = "run_budget_exhausted"

// ReasonBudgetExhausted is the failure reason of an attempt stopped by its role's budget.
const ReasonBudgetExhausted = "budget_exhausted"

// ErrNotRunnable: the run's current stage is not one `rein run next` can run (yet).
var ErrNotRunnable = errors.New("stage not runnable")

// RequestPrefix is the fixed start of every stage request of run id; the context hook cuts
// each model request at the latest user message carrying it.
func RequestPrefix(id string) string { return "Stage request for run " + id }

// Attempt is the body of a stage.attempt record: how the attempt settled, what it produced
// and where its session ledger ended — never a prompt or a transcript.
type Attempt struct {
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"` // accepted or failed
	Reason  string `json:"reason,omitempty"`
	// Cause types a failed attempt (see the Cause* codes); see also [Attempt.FailureCause].
	Cause    *Cause              `json:"cause,omitempty"`
	Detail   string              `json:"detail,omitempty"`
	Artifact *artifact.Reference `json:"artifact,omitempty"`
	Contract artifact.Digest     `json:"contractDigest,omitempty"` // sha256 of the canonical contract JSON
	Session  SessionAnchor       `json:"session"`
	Turns    int                 `json:"turns"`
	Tokens   int                 `json:"tokens"` // all tokens: input, output and cache
	// InputTokens and OutputTokens split Tokens (input counts cache reads and writes).
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
	ElapsedMs    int64   `json:"elapsedMs"`
	// RequestBytes is the size of the attempt's first model request in rein's
	// provider-neutral JSON encoding; FixedBytes the part of it that is the system prompt and
	// the tool schemas; PackBytes the rendered pack inside its stage request.
	RequestBytes int `json:"requestBytes,omitempty"`
	FixedBytes   int `json:"fixedBytes,omitempty"`
	PackBytes    int `json:"packBytes,omitempty"`
	// provider is the provider's error of an attempt that failed on a model call.
	provider *llm.Error
}

// SessionAnchor names a stage session ledger and its head when the attempt settled.
type SessionAnchor struct {
	ID   string `json:"id"`
	Dir  string `json:"dir"` // relative to $REIN_HOME
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// ResearchSystem is the workflow role's system prompt for the Research stage.
const ResearchSystem = `You are the workflow role of a rein delivery run, in the Research stage.
Read the repository (read, grep, find, ls) but not .rein/: the pack holds what you need of it.
Change nothing. Establish what the requirement needs, name what remains unknown, and submit
the Research contract with rein_stage_result: prose is no outcome.`

// researchRules are the rules of the Research request (README, Delivery runs).
const researchRules = `- Submit exactly one Research contract with rein_stage_result; prose is no outcome.
- Every established fact cites at least one reference id of the pack above; cite nothing else.
- List what you could not establish as remainingUnknowns; mark required the ones the delivery
  cannot proceed without, and ask a clarification question for each required unknown.
- List evidence that is required but unavailable in requiredEvidenceUnavailable.
- A person answers every required evidence gap above in Clarification (keyed by the gap's id);
  do not treat one as established.
- Never include secrets, credentials or tokens.
- If a submission is refused, correct it following the listed problems and submit again.`

// Next runs the run's current stage: Research, Specification and Ticket Planning as fresh sessions of the
// workflow role until one submits an accepted contract (stage completed) or the attempts or
// the budget are used up (a blocker); Clarification completes once every required unknown is
// answered ([Clarify]) and otherwise refuses with a blocker. It refuses to continue on a stale
// input (run_artifact_stale). It returns the stage it ran. It holds the run's lease while it
// runs; a live holder refuses it with [ErrRunning].
func Next(ctx context.Context, env Env, id string) (stage string, err error) {
	err = withLease(env, id, "next", func() error {
		stage, err = next(ctx, env, id)
		return err
	})
	return stage, err
}

// next is [Next] under the run's lease.
func next(ctx context.Context, env Env, id string) (string, error) {
	r, l, err := env.openRun(id)
	if err != nil {
		return "", err
	}
	defer l.Close()
	if r.Aborted {
		return "", fmt.Errorf("%w: run %s was aborted", ErrFinished, id)
	}
	if env, err = r.withSandbox(env, l, "next"); err != nil {
		return "", err
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return "", err
	}
	bs := r.evidenceBlockers(env)
	if b, err := r.staleBlocker(); err != nil {
		return "", err
	} else if b != nil {
		bs = append(bs, *b)
	}
	if len(bs) > 0 {
		return r.Stage, &BlockedError{RunID: id, Blockers: bs}
	}
	// A crash may have interrupted the last attempt: settle it by evidence first, so that a
	// new attempt never runs on top of its leftovers.
	if s, err := r.settleInterrupted(env, l); err != nil {
		return r.Stage, err
	} else if s.completed() {
		return s.Stage, nil
	}
	switch r.Stage {
	case StageResearch:
		return StageResearch, r.runModelStage(ctx, env, l, r.researchStage())
	case StageClarification:
		return StageClarification, r.passClarification(l)
	case StageSpecification:
		return StageSpecification, r.runModelStage(ctx, env, l, r.specStage())
	case StageSpecGate:
		return r.Stage, fmt.Errorf("%w: run %s is at the Spec Gate: approve the specification with `rein run approve %s --gate spec --digest SHA256` or send it back with `rein run reject %s --gate spec --reason TEXT`", ErrNotRunnable, id, id, id)
	case StageTicketPlanning:
		return StageTicketPlanning, r.runModelStage(ctx, env, l, r.planStage())
	case StageTicketExecution, StageTicketReview, StageTicketVerification, StageTicketAcceptance:
		return r.runTickets(ctx, env, l)
	case StageTicketPlanGate:
		return r.Stage, fmt.Errorf("%w: run %s is at the Ticket Plan Gate: approve the ticket plan with `rein run approve %s --gate ticket-plan --digest SHA256` or send it back with `rein run reject %s --gate ticket-plan --reason TEXT`", ErrNotRunnable, id, id, id)
	}
	if s, ok, err := r.nextDelivery(ctx, env, l); ok {
		return s, err
	}
	return r.Stage, fmt.Errorf("%w: run %s is at stage %s, which is not implemented yet; rein run next runs Research, Clarification, Specification, Ticket Planning, the ticket stages and the stages after them", ErrNotRunnable, id, r.Stage)
}

// modelStage is what distinguishes one model stage from another on the shared runner.
type modelStage struct {
	stage, title string
	kind         contract.Kind
	art          string // artifact id
	file         func(attempt int) string
	system       string
	pack         func() (artifact.Pack, error)
	request      func(attempt int, pack []byte) string
	// refs binds what a submission may refer to (default: the pack's reference ids).
	refs func(artifact.Pack) contract.Refs
	// accepted runs after the stage.completed record of an accepted contract.
	accepted func(l *ledger.Ledger, a Attempt) error
	// skills is the request's "Pinned skills" section ([Run.stageSkills]), read per attempt.
	skills string
	// bound is the stage's input boundary over its pack (see bounds.go).
	bound func(artifact.Pack) stageBound
}

func (r *Run) researchStage() modelStage {
	return modelStage{stage: StageResearch, title: "Research", kind: contract.KindResearch, art: ArtResearch,
		file: attemptFile(ArtResearch), system: ResearchSystem, pack: r.researchPack, bound: repositoryBound,
		request: func(n int, pack []byte) string {
			return ResearchRequest(r.ID, n, r.Gaps, pack)
		},
		accepted: func(l *ledger.Ledger, a Attempt) error {
			res, err := r.researchContract(a.Artifact)
			if err != nil {
				return err
			}
			if len(r.openRequired(res)) > 0 {
				return nil
			}
			_, err = l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageClarification, Attempt: 0, Outcome: "nothing to clarify"}})
			return err
		}}
}

// roleUsed sums what role has spent over every recorded attempt of the stages it runs.
func (r *Run) roleUsed(role string) (turns, tokens int, elapsed time.Duration) {
	for _, s := range DeliveryWorkflow().Stages {
		if s.Role != role {
			continue
		}
		for _, a := range r.StageAttempts[s.ID] {
			turns, tokens, elapsed = turns+a.Turns, tokens+a.Tokens, elapsed+time.Duration(a.ElapsedMs)*time.Millisecond
		}
	}
	return turns, tokens, elapsed
}

// budgetLeft is what remains of a role's budget: the model turns, tokens and elapsed time its
// next attempt may reserve; exhausted names the first dimension used up ("" when none is).
type budgetLeft struct {
	turns, tokens int
	elapsed       time.Duration
	exhausted     string
	detail        string
}

func (r *Run) budgetLeft(role string, pol ModelPolicy) budgetLeft {
	turns, tokens, elapsed := r.roleUsed(role)
	return budgetOf(pol, turns, tokens, elapsed)
}

// budgetOf is what remains of pol's budget once turns, tokens and elapsed are used.
func budgetOf(pol ModelPolicy, turns, tokens int, elapsed time.Duration) budgetLeft {
	limit, _ := time.ParseDuration(pol.Budget.Elapsed)
	b := budgetLeft{turns: pol.Budget.ModelTurns - turns, tokens: pol.Budget.Tokens - tokens, elapsed: limit - elapsed}
	b.detail = fmt.Sprintf("%d of %d model turns, %d of %d tokens, %s of %s used", turns, pol.Budget.ModelTurns, tokens, pol.Budget.Tokens, elapsed.Round(time.Millisecond), pol.Budget.Elapsed)
	switch {
	case b.turns <= 0:
		b.exhausted = "modelTurns"
	case b.tokens <= 0:
		b.exhausted = "tokens"
	case b.elapsed <= 0:
		b.exhausted = "elapsed"
	}
	return b
}

// runModelStage runs fresh sessions of ms until one is accepted, the attempts of this round
// (since the stage was last sent back) are used up (run_stage_failed) or the role's budget is
// (run_budget_exhausted). Each attempt reserves what remains of the role's budget — model
// turns, tokens and elapsed time summed over the role's recorded attempts — and is stopped by
// the kernel before a model call that would go beyond it.
func (r *Run) runModelStage(ctx context.Context, env Env, l *ledger.Ledger, ms modelStage) error {
	pol := r.Lock.Models[RoleWorkflow]
	round := r.RoundStart[ms.stage]
	for {
		n := r.Attempts[ms.stage] + 1
		left := r.budgetLeft(RoleWorkflow, pol)
		if left.exhausted != "" {
			b := Blocker{Code: BlockBudgetExhausted, Stage: ms.stage,
				Detail: fmt.Sprintf("the workflow role's %s budget is used up before %s has an accepted contract (%s)", left.exhausted, ms.title, left.detail),
				Recovery: []string{"read the attempts in `rein run status " + r.ID + "`",
					"a larger budget is a profile change, which drifts from the locked run: abort the run (rein run abort " + r.ID + "), raise the workflow role's budget in " + ProfilePath + ", approve it and start a new run"}}
			if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
				return err
			}
			return &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
		}
		if counted := r.countedAttempts(ms.stage, round); counted >= MaxStageAttempts {
			b := Blocker{Code: BlockStageFailed, Stage: ms.stage,
				Detail: fmt.Sprintf("%s ended %d attempt(s) without an accepted contract (%s)", ms.title, counted, left.detail),
				Recovery: []string{"read the attempts in `rein run status " + r.ID + "` and adjust the workflow role's model or budget in " + ProfilePath,
					"abort the run (rein run abort " + r.ID + ") and start a new one"}}
			if _, err := l.Append(ledger.Entry{Kind: KindBlocked, Body: blockedBody{Blockers: []Blocker{b}}}); err != nil {
				return err
			}
			return &BlockedError{RunID: r.ID, Blockers: []Blocker{b}}
		}
		// The skill trees are read and checked before the attempt starts: drift blocks the run
		// instead of sending changed text.
		skills, err := r.stageSkills(env, l, ms.stage)
		if err != nil {
			return err
		}
		ms.skills = skills
		if _, err := l.Append(ledger.Entry{Kind: KindStageStarted, Body: stageBody{Stage: ms.stage, Attempt: n}}); err != nil {
			return err
		}
		r.Attempts[ms.stage] = n
		a, err := r.modelAttempt(ctx, env, n, pol, left, ms)
		if err != nil {
			return err
		}
		if _, err := l.Append(ledger.Entry{Kind: KindStageAttempt, Body: a}); err != nil {
			return err
		}
		env.crash("attempt")
		r.StageAttempts[ms.stage] = append(r.StageAttempts[ms.stage], a)
		if a.Outcome == "accepted" {
			if _, err := l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: ms.stage, Attempt: n, Outcome: "accepted"}}); err != nil {
				return err
			}
			if ms.accepted != nil {
				return ms.accepted(l, a)
			}
			return nil
		}
		if a.provider != nil {
			return fmt.Errorf("%s attempt %d of run %s failed: the workflow role's provider is unavailable (recorded as %s): %w; run `rein run next %s` again once the provider answers",
				ms.title, n, r.ID, CauseProviderUnavailable, a.provider, r.ID)
		}
	}
}

// researchPack is the Research stage's pack: the requirement, its snapshot, the Preflight
// result (as the ledger recorded them) and the locked guidance files.
func (r *Run) researchPack() (artifact.Pack, error) {
	p := artifact.Pack{Name: "research", Version: "1"}
	for _, id := range []string{ArtRequirement, ArtSnapshot} {
		ref, ok := r.ref(id)
		if !ok {
			return p, fmt.Errorf("the ledger names no %s artifact", id)
		}
		p.References = append(p.References, ref)
	}
	if r.Preflight != nil {
		p.References = append(p.References, *r.Preflight)
	}
	for _, g := range r.Lock.Guidance {
		data, err := os.ReadFile(filepath.Join(r.Project, filepath.FromSlash(g.Path)))
		if err != nil {
			return p, err
		}
		ref, err := artifact.NewReference("guidance:"+g.Path, g.Path, data)
		if err != nil {
			return p, err
		}
		p.References = append(p.References, ref)
	}
	return p, nil
}

// ResearchRequest is the text of a Research request: the fixed prefix, the evidence gaps, the
// rendered pack, where to submit the contract and the rules. The contract's schema is not in the
// text: it is rein_stage_result's parameters, sent once with the tool.
func ResearchRequest(id string, attempt int, gaps []Gap, pack []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: stage research, attempt %d.\n\n", RequestPrefix(id), attempt)
	b.WriteString(gapsSection(gaps))
	b.WriteString("\n")
	b.WriteString(requestTail(pack, researchRules))
	return b.String()
}

// boundaryRules end the rules of every stage request: the input boundary and the no-history
// rule (README, Delivery runs).
const boundaryRules = `- Do not use or reconstruct prior conversation history.
- Treat only Artifact Pack references as established inputs.`

// requestTail is the part every stage request ends with: the rendered pack, where the contract
// goes (the tool's parameters are its schema, so the text does not repeat it) and the stage's
// rules followed by [boundaryRules].
func requestTail(pack []byte, rules string) string {
	return fmt.Sprintf("## Pack\n\nCite these artifacts by their id.\n\n%s\n## Contract\n\nSubmit with %s (its parameters are the contract).\n\n## Rules\n\n%s\n%s\n",
		pack, contract.ToolName, rules, boundaryRules)
}

// modelAttempt runs one attempt of a model stage in a fresh session and settles it.
func (r *Run) modelAttempt(ctx context.Context, env Env, n int, pol ModelPolicy, left budgetLeft, ms modelStage) (Attempt, error) {
	a := Attempt{Stage: ms.stage, Attempt: n}
	pack, err := ms.pack()
	if err != nil {
		return a, err
	}
	op, err := artifact.Open(pack, r.Project)
	if err != nil {
		return a, fmt.Errorf("%s pack: %w", ms.stage, err)
	}
	c, err := contract.For(ms.kind)
	if err != nil {
		return a, err
	}
	rel := RunsDir + "/" + r.ID + "/" + ms.file(n)
	sink := func(_ context.Context, acc *contract.Accepted) error {
		data := renderStageArtifact(r.ID, ms.art, ms.title, ms.stage, n, env.now(), json.RawMessage(acc.JSON))
		ref, err := artifact.NewReference(ms.art, rel, data)
		if err != nil {
			return err
		}
		if err := writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data); err != nil {
			return err
		}
		env.crash("artifact")
		a.Artifact, a.Contract = &ref, artifact.Digest(acc.Digest)
		return nil
	}
	refs := contract.PackRefs(pack)
	if ms.refs != nil {
		refs = ms.refs(pack)
	}
	result, err := contract.NewStageResult(c, refs, sink)
	if err != nil {
		return a, err
	}
	sid := fmt.Sprintf("%s-%s-%d", r.ID, ms.stage, n)
	dir := filepath.Join("runs", r.ID, "stages", fmt.Sprintf("%s-%d", ms.stage, n))
	// A directory left by a crash whose stage.started record never became durable is kept as
	// evidence; this attempt's session goes beside it.
	for k := 2; ; k++ {
		if _, err := os.Lstat(filepath.Join(env.Home, dir)); errors.Is(err, os.ErrNotExist) {
			break
		}
		dir = filepath.Join("runs", r.ID, "stages", fmt.Sprintf("%s-%d.%d", ms.stage, n, k))
	}
	if env.Agents == nil {
		return a, fmt.Errorf("%w: this environment builds no agents", ErrNotRunnable)
	}
	env.crash("session")
	bound := ms.bound(pack)
	agent, err := env.Agents.Agent(ctx, agentspec.Spec{
		Role: RoleWorkflow, Workspace: r.Project, SessionDir: filepath.Join(env.Home, dir), SessionID: sid,
		Model:  agentspec.Model{Provider: pol.Provider, Model: pol.Model, BaseURL: pol.BaseURL, Script: pol.Script, Thinking: llm.ThinkingLevel(pol.Thinking)},
		System: ms.system, Tools: []tool.Tool{result}, Standard: bound.tools, Reads: bound.reads,
		MaxTurns: left.turns, MaxUsageTokens: left.tokens, Deadline: time.Now().Add(left.elapsed),
		ContextHooks: []kernel.ContextHook{contextpack.CutAtPrefix{Prefix: RequestPrefix(r.ID)}},
		OnRequest:    a.measure,
		Now:          env.now, LedgerFS: env.SessionFS,
	})
	if err != nil {
		return a, err
	}
	defer agent.Close()
	packed := artifact.Render(op)
	req := ms.request(n, packed) + ms.skills
	start := env.now()
	a.PackBytes = len(packed)
	out, err := agent.Run(ctx, llm.UserText(req))
	if err != nil {
		// A budget stop and a provider failure after retries settle the attempt (failed,
		// with its cause); anything else (cancelled, a recording failure) leaves it to resume.
		if out == nil || !errors.As(err, new(*kernel.BudgetError)) && providerFailure(err) == nil {
			return a, err
		}
	}
	_, oerr := result.Outcome()
	a.settle(env.now().Sub(start), out, SessionAnchor{ID: sid, Dir: filepath.ToSlash(dir)}, agent, oerr)
	return a, nil
}

// settle fills in how an attempt's session ended: elapsed time, turns, tokens and cost, the
// session's head, and the outcome oerr decides (nil: accepted), a failure with its reason and
// typed cause. Model stages and the ticket loop's writer and review attempts share it.
func (a *Attempt) settle(elapsed time.Duration, out *kernel.Outcome, anchor SessionAnchor, agent interface{ Head() (int64, string) }, oerr error) {
	a.ElapsedMs = elapsed.Milliseconds()
	u := out.Usage
	a.Turns, a.CostUSD = out.Turns, u.Cost.Total
	a.InputTokens, a.OutputTokens = u.Input+u.CacheRead+u.CacheWrite, u.Output
	a.Tokens = a.InputTokens + a.OutputTokens
	a.Session = anchor
	a.Session.Seq, a.Session.Hash = agent.Head()
	if oerr == nil {
		a.Outcome = "accepted"
		return
	}
	a.Outcome, a.Detail = "failed", oerr.Error()
	var ae *contract.AttemptError
	if errors.As(oerr, &ae) {
		a.Reason = string(ae.Reason)
	}
	if be := (*kernel.BudgetError)(nil); errors.As(out.Err, &be) {
		a.Reason = ReasonBudgetExhausted
	}
	a.Cause, a.provider = attemptCause(out.Err, oerr), providerFailure(out.Err)
	if a.provider != nil {
		a.Reason = CauseProviderUnavailable
	}
	if out.Err != nil {
		a.Detail += "; the session ended: " + out.Err.Error()
	}
}
