package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/run/contract"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/worktree"
)

// WriterSystem is the writer role's system prompt.
const WriterSystem = `You are an isolated Ticket Writer of a rein delivery run. Use only the current Ticket writer
request and its pack. Work only in your workspace, the ticket's git worktree, with read, write,
edit, grep, find, ls and run_command (approved verification commands by id; there is no shell).
Do not read or rely on operator, reviewer or other writer conversation. When the ticket is
implemented, submit it with rein_ticket_candidate: prose is no outcome.`

const writerRules = `- Implement this ticket only, as its contract and specification sections say.
- Change files only inside your workspace; a path outside it is blocked
  (` + BlockWriterPathEscape + `).
- Run commands only with run_command, by the id of an approved verification command; anything
  else is blocked (` + BlockWriterUnapprovedBash + `). There is no shell.
- Submit exactly once with rein_ticket_candidate when the work is done: rein runs every required
  verification command itself, commits your change and freezes it for an independent review.
- Where the pack holds review findings or verification failures of an earlier attempt, address
  every blocking finding and failure.
- Never include secrets, credentials or tokens.`

// ticketDir is the ticket's worktree directory.
func (r *Run) ticketDir(env Env, ticket string) string {
	return filepath.Join(env.Home, "worktrees", r.ID, ticket)
}

// ticketArt is the project-relative path of a ticket artifact.
func (r *Run) ticketArt(ticket, name string) string {
	return fmt.Sprintf("%s/%s/tickets/%s/%s", RunsDir, r.ID, ticket, name)
}

// writeTicketArtifact writes a new immutable ticket artifact named name (name.k when a
// crashed try of the same step left one) and returns its reference.
func (r *Run) writeTicketArtifact(ticket, id, name string, data []byte) (artifact.Reference, error) {
	rel := r.ticketArt(ticket, name+".md")
	for k := 2; ; k++ {
		if _, err := os.Lstat(filepath.Join(r.Project, filepath.FromSlash(rel))); errors.Is(err, os.ErrNotExist) {
			break
		}
		rel = r.ticketArt(ticket, fmt.Sprintf("%s.%d.md", name, k))
	}
	ref, err := artifact.NewReference(id, rel, data)
	if err != nil {
		return ref, err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.Project, filepath.FromSlash(rel))), 0o755); err != nil {
		return ref, err
	}
	return ref, writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data)
}

// openTicketWorktree returns the ticket's worktree: made from its start commit (ticketStart:
// the run's base, or the accepted work it depends on) for its first attempt, opened at its
// last candidate otherwise.
func (r *Run) openTicketWorktree(ctx context.Context, env Env, l *ledger.Ledger, tk contract.Ticket, t *ticketRun) (*worktree.Repo, *worktree.Worktree, error) {
	s := r.Tickets.Schedule
	repo, err := worktree.OpenRepo(ctx, r.Project)
	if err != nil {
		return nil, nil, err
	}
	dir := r.ticketDir(env, t.ID)
	start := t.start(s.Base)
	var wt *worktree.Worktree
	if t.lastCandidate() == nil {
		if start, err = r.ticketStart(ctx, env, l, repo, tk, t); err != nil {
			return nil, nil, err
		}
		wt, err = repo.CreateAt(ctx, dir, s.Branch, s.Base, start)
	} else {
		wt, err = repo.Open(ctx, dir, start)
	}
	code, ok := worktree.CodeOf(err)
	if ok && code == worktree.CodeStartMismatch {
		return nil, nil, r.recordBlocker(l, *r.startMismatch(StageTicketExecution, t.ID, err.Error()))
	}
	if ok && (code == worktree.CodeBaseMoved || code == worktree.CodeHeadMismatch || code == worktree.CodeNotWorktree) {
		return nil, nil, r.recordBlocker(l, Blocker{Code: BlockBaseDrift, Stage: StageTicketExecution, Ticket: t.ID,
			Detail: fmt.Sprintf("ticket %s's worktree cannot be made from the recorded base %s (start %s): %v", t.ID, s.Base, start, err),
			Recovery: []string{fmt.Sprintf("put branch %s back at %s (git update-ref refs/heads/%s %s) or restore the worktree %s", s.Branch, s.Base, s.Branch, s.Base, dir),
				"abort the run (rein run abort " + r.ID + ") and start a new one from the current commit"}})
	}
	return repo, wt, err
}

// writerInputs are the artifacts of the previous attempt's outcome that a retry gets: the
// review with its findings, the failed verification.
func (t *ticketRun) writerInputs() []artifact.Reference {
	c := t.lastCandidate()
	if c == nil {
		return nil
	}
	var in []artifact.Reference
	for _, rv := range t.reviewsOf(c.Digest) {
		if rv.Outcome == "accepted" && rv.Blocking > 0 && rv.Artifact != nil {
			in = append(in, *rv.Artifact)
		}
	}
	if v := t.verificationOf(c.Digest); v != nil && !v.Passed {
		in = append(in, v.Artifact)
	}
	return in
}

// writerAttempt runs writer attempt n of ticket tk in a fresh session and records it.
func (r *Run) writerAttempt(ctx context.Context, env Env, l *ledger.Ledger, tk contract.Ticket, t *ticketRun, n int) error {
	pol := r.Lock.Models[RoleWriter]
	left := r.ticketBudget(env, RoleWriter)
	_, wt, err := r.openTicketWorktree(ctx, env, l, tk, t)
	if err != nil {
		return err
	}
	parent := wt.Base
	if c := t.lastCandidate(); c != nil {
		parent = c.Head
	}
	inputs := t.writerInputs()
	skills, err := r.ticketSkills(env, l) // writes no state another ticket of the batch reads
	if err != nil {
		return err
	}
	req, packBytes, err := r.writerRequest(tk, n, inputs)
	if err != nil {
		return err
	}
	sid, dir := r.ticketSessionPlace(env, StageTicketExecution, t.ID, n)
	if err := r.takeTicketLease(env, l, t, sid); err != nil {
		return err
	}
	started := ticketStarted{Ticket: t.ID, Attempt: n, Session: SessionAnchor{ID: sid, Dir: filepath.ToSlash(dir)}, Model: modelName(pol), Parent: parent, Inputs: inputs}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketWriterStarted, Body: started}); err != nil {
		return err
	}
	t.OpenWriter = &started
	guard := newTicketGuard(RoleWriter)
	fz := &freezer{r: r, env: env, l: l, t: t, wt: wt, n: n, sid: sid, parent: parent, deadline: env.now().Add(left.elapsed)}
	ids := slices.Sorted(maps.Keys(r.Lock.Verification))
	ct, err := contract.NewCandidateTool(contract.Refs{}.WithTicket(tk.ID, ids...), fz.freeze)
	if err != nil {
		return err
	}
	a, err := r.runTicketSession(ctx, env, ticketSession{stage: StageTicketExecution, role: RoleWriter, ticket: t.ID, n: n, pol: pol, left: left,
		workspace: wt.Dir, sid: sid, dir: dir, system: WriterSystem, prefix: WriterRequestPrefix(r.ID), request: req + skills, packBytes: packBytes,
		tools:    []tool.Tool{ct, &runCommandTool{run: r, env: env, dir: wt.Dir}},
		standard: []string{policy.ToolRead, policy.ToolWrite, policy.ToolEdit, policy.ToolGrep, policy.ToolFind, policy.ToolLs},
		guard:    guard,
		outcome: func() error {
			_, err := ct.Outcome()
			return err
		}})
	if err != nil {
		return err
	}
	if c := t.candidate(n); c != nil && a.Outcome == "accepted" {
		a.Candidate = c.Digest
	}
	return r.settleWriter(l, t, a)
}

// settleWriter records a writer attempt and releases the ticket's lease.
func (r *Run) settleWriter(l *ledger.Ledger, t *ticketRun, a TicketAttempt) error {
	if _, err := l.Append(ledger.Entry{Kind: KindTicketWriterAttempt, Body: a}); err != nil {
		return err
	}
	t.Writers = append(t.Writers, a)
	t.OpenWriter = nil
	r.noteTicketAttempt(a)
	if err := r.releaseTicketLease(l, t); err != nil {
		return err
	}
	if a.provider != nil {
		return fmt.Errorf("ticket %s writer attempt %d of run %s failed: the writer role's provider is unavailable (recorded as %s): %w; run `rein run next %s` again once the provider answers",
			t.ID, a.Attempt.Attempt, r.ID, CauseProviderUnavailable, a.provider, r.ID)
	}
	return nil
}

// writerRequest is the Ticket Worker request: the ticket contract, the specification
// sections it covers, profile facts, the approved commands, the evidence gaps, the pack
// (guidance and a retry's inputs) and the rules.
func (r *Run) writerRequest(tk contract.Ticket, n int, inputs []artifact.Reference) (string, int, error) {
	_, spec, err := r.approvedSpec()
	if err != nil {
		return "", 0, err
	}
	pack, err := r.withGuidance(artifact.Pack{Name: "ticket-writer", Version: "1"})
	if err != nil {
		return "", 0, err
	}
	pack.References = append(pack.References, inputs...)
	op, err := artifact.Open(pack, r.Project)
	if err != nil {
		return "", 0, fmt.Errorf("ticket writer pack: %w", err)
	}
	packed := artifact.Render(op)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ticket %s, attempt %d.\n\n", WriterRequestPrefix(r.ID), tk.ID, n)
	b.WriteString("## Ticket contract (approved)\n\n" + fence(jsonText(tk)) + "\n")
	b.WriteString("## Specification sections it covers\n\n" + fence(jsonText(coveredSections(spec, tk))) + "\n")
	b.WriteString("## Profile facts\n\n")
	fmt.Fprintf(&b, "- Profile digest: %s\n- Guidance files (in the pack): %d\n\n", r.Lock.ProfileDigest, len(r.Lock.Guidance))
	b.WriteString("## Approved verification commands (run_command by id)\n\n")
	for _, id := range slices.Sorted(maps.Keys(r.Lock.Verification)) {
		v := r.Lock.Verification[id]
		fmt.Fprintf(&b, "- %s: %s (required: %t)\n", id, strings.Join(v.Argv, " "), v.Required)
	}
	b.WriteString("\n" + gapsSection(r.Gaps) + "\n")
	if len(inputs) > 0 {
		fmt.Fprintf(&b, "## Earlier attempt\n\nAttempt %d's candidate was not accepted: its review findings and verification failures are in the pack. Your worktree continues from that candidate.\n\n", n-1)
	}
	fmt.Fprintf(&b, "## Pack\n\nCite these artifacts by their id.\n\n%s\n## Contract\n\nSubmit with %s (its parameters are the contract).\n\n## Rules\n\n%s\n%s\n",
		packed, contract.CandidateToolName, writerRules, boundaryRules)
	return b.String(), len(packed), nil
}

// coveredSections returns the specification's sections holding an item tk implements, each
// with only those items.
func coveredSections(spec *contract.Specification, tk contract.Ticket) []contract.Section {
	var out []contract.Section
	for _, s := range spec.Sections {
		var items []contract.Item
		for _, it := range s.Items {
			if slices.Contains(tk.SpecItemIDs, it.ID) {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			s.Items = items
			out = append(out, s)
		}
	}
	return out
}

func jsonText(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(data)
}

// fence puts text in a backtick fence longer than any backtick run in it.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + text + "\n" + f + "\n"
}

// freezer is the engine's side of one writer attempt's rein_ticket_candidate.
type freezer struct {
	r        *Run
	env      Env
	l        *ledger.Ledger
	t        *ticketRun
	wt       *worktree.Worktree
	n        int
	sid      string
	parent   string
	deadline time.Time
}

// candidateBody is the candidate artifact's content: what the writer submitted and what rein
// established before freezing it. Its digest enters the candidate digest with the commit and
// the diff, so it names no commit itself.
type candidateBody struct {
	Ticket       string       `json:"ticket"`
	Attempt      int          `json:"attempt"`
	Base         string       `json:"base"`
	Parent       string       `json:"parent"`
	Files        []string     `json:"files"`
	Summary      string       `json:"summary"`
	Session      string       `json:"writerSession"`
	Model        string       `json:"writerModel"`
	Verification []commandRun `json:"verification"`
}

// freeze implements contract.Freezer: the checks only rein can make, then the durable
// intent, the freeze commit, the seal and the candidate record.
func (f *freezer) freeze(ctx context.Context, acc *contract.Accepted) (contract.Frozen, error) {
	r, t := f.r, f.t
	if t.OpenWriter == nil || t.OpenWriter.Session.ID != f.sid || t.OpenWriter.Attempt != f.n {
		return contract.Frozen{}, contract.CandidateRefusal(contract.CodeCandidateSessionNotCurrent, "(root)",
			"this session (%s) is not ticket %s's current writer attempt", f.sid, t.ID)
	}
	if !f.env.now().Before(f.deadline) {
		return contract.Frozen{}, contract.CandidateRefusal(contract.CodeCandidateOverBudget, "(root)",
			"the writer role's elapsed-time budget ran out during this attempt; the candidate cannot be frozen")
	}
	changes, err := f.wt.Changes(ctx)
	if err != nil {
		return contract.Frozen{}, err
	}
	if head, err := f.wt.Head(ctx); err != nil {
		return contract.Frozen{}, err
	} else if len(changes) == 0 && head == f.parent {
		return contract.Frozen{}, contract.CandidateRefusal(contract.CodeCandidateDiffEmpty, "(root)",
			"the worktree holds no change: implement the ticket (write or edit files), then submit")
	}
	runs, passed, err := r.runVerification(ctx, f.env, f.wt.Dir, acc.TicketCandidate.VerificationIDs)
	if err != nil {
		return contract.Frozen{}, err
	}
	if !passed {
		var failed []string
		for _, c := range runs {
			if !c.Passed {
				failed = append(failed, fmt.Sprintf("%s exited %d:\n%s", c.ID, c.ExitCode, c.Output))
			}
		}
		return contract.Frozen{}, contract.CandidateRefusal(contract.CodeCandidateVerificationFailed, "(root)",
			"verification failed when rein ran it; fix the work and submit again:\n%s", strings.Join(failed, "\n"))
	}
	body := candidateBody{Ticket: t.ID, Attempt: f.n, Base: f.wt.Base, Parent: f.parent, Files: changes,
		Summary: acc.TicketCandidate.Summary, Session: f.sid, Model: t.OpenWriter.Model, Verification: runs}
	data := renderStageArtifact(r.ID, "candidate", "Ticket candidate "+t.ID, StageTicketExecution, f.n, f.env.now(), body)
	ref, err := r.writeTicketArtifact(t.ID, "candidate", fmt.Sprintf("candidate-%d", f.n), data)
	if err != nil {
		return contract.Frozen{}, err
	}
	intent := freezeIntent{Ticket: t.ID, Attempt: f.n, Parent: f.parent, SessionID: f.sid, Artifact: &ref, Verification: results(runs)}
	if _, err := f.l.Append(ledger.Entry{Kind: KindTicketFreezeIntent, Body: intent}); err != nil {
		return contract.Frozen{}, err
	}
	t.Intent = &intent
	f.env.crash("ticket-intent")
	c, err := r.freezeCandidate(ctx, f.env, f.l, t, f.wt, intent)
	if code, ok := worktree.CodeOf(err); ok && code == worktree.CodeDiffEmpty {
		return contract.Frozen{}, contract.CandidateRefusal(contract.CodeCandidateDiffEmpty, "(root)", "the worktree holds no change to commit")
	}
	if err != nil {
		return contract.Frozen{}, err
	}
	return contract.Frozen{Commit: c.Head, DiffDigest: c.DiffDigest, Digest: c.Digest}, nil
}

// freezeCandidate commits the intent's attempt (or finds the commit a crashed freeze made),
// seals it to the candidate artifact and records the candidate.
func (r *Run) freezeCandidate(ctx context.Context, env Env, l *ledger.Ledger, t *ticketRun, wt *worktree.Worktree, in freezeIntent) (*CandidateRecord, error) {
	fr, err := wt.Freeze(ctx, worktree.FreezeSpec{Run: r.ID, Ticket: t.ID, Attempt: strconv.Itoa(in.Attempt), Parent: in.Parent})
	if err != nil {
		return nil, err
	}
	env.crash("ticket-frozen")
	sealed := worktree.Seal(fr, string(in.Artifact.Digest))
	c := CandidateRecord{Ticket: t.ID, Attempt: in.Attempt, Base: fr.Base, Parent: fr.Parent, Head: fr.Head, DiffDigest: fr.DiffDigest,
		Digest: sealed.Digest, Files: fr.Files, Artifact: *in.Artifact, Verification: in.Verification}
	if _, err := l.Append(ledger.Entry{Kind: KindTicketCandidate, Body: c}); err != nil {
		return nil, err
	}
	t.Candidates = append(t.Candidates, c)
	env.crash("ticket-candidate")
	return &c, nil
}

// sealed returns the worktree.Candidate a record names.
func (c *CandidateRecord) sealed() worktree.Candidate {
	return worktree.Candidate{Frozen: worktree.Frozen{Base: c.Base, Parent: c.Parent, Head: c.Head, DiffDigest: c.DiffDigest, Files: c.Files},
		ArtifactDigest: string(c.Artifact.Digest), Digest: c.Digest}
}
