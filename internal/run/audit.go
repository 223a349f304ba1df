package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/worktree"
)

// ErrAuditFailed: `rein run audit` found a violation (see *AuditError).
var ErrAuditFailed = errors.New("run audit failed")

// AuditSchemaVersion is the version of `rein run audit --json` ([AuditReport]).
const AuditSchemaVersion = 1

// The audit's checks, in the order they run.
const (
	AuditSessionsFresh    = "sessions_fresh"
	AuditModelsDistinct   = "models_distinct"
	AuditReviewReadOnly   = "review_read_only"
	AuditReviewIsolated   = "review_isolated"
	AuditTicketStarts     = "ticket_starts"
	AuditCandidatesFrozen = "candidates_frozen"
	AuditApprovalsBound   = "approvals_bound"
	AuditSameLock         = "same_lock"
)

// Stage ids of the ticket loop whose sessions the audit reads (stage.attempt records with a
// ticket field).
const (
	auditWriterStage = "ticket-execution"
	auditReviewStage = "ticket-review"
)

// minCanaryLine is the length from which a line of a writer session's prose counts as
// writer text when found in a review session.
const minCanaryLine = 24

// AuditReport is what `rein run audit` found: each check with how many things it checked,
// and every violation in check order.
type AuditReport struct {
	SchemaVersion int              `json:"schemaVersion"`
	RunID         string           `json:"runId"`
	Passed        bool             `json:"passed"`
	Checks        []AuditCheck     `json:"checks"`
	Violations    []AuditViolation `json:"violations"`
	History       string           `json:"history"`
}

// AuditCheck is one check: passed when it found no violation; Checked counts its subjects.
type AuditCheck struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Checked int    `json:"checked"`
}

// AuditViolation names what a check found wrong.
type AuditViolation struct {
	Check   string `json:"check"`
	Subject string `json:"subject"`
	Detail  string `json:"detail"`
}

// AuditError is the first violation of a failed audit (errors.Is(err, ErrAuditFailed)).
type AuditError struct {
	RunID string
	First AuditViolation
	Count int
}

func (e *AuditError) Error() string {
	return fmt.Sprintf("run %s fails its audit (%d violation(s)); the first: %s: %s: %s", e.RunID, e.Count, e.First.Check, e.First.Subject, e.First.Detail)
}

func (e *AuditError) Unwrap() error { return ErrAuditFailed }

// auditAttempt is a stage.attempt record as the audit reads it: the ticket loop's attempts
// also name their ticket and the tools their session was offered.
type auditAttempt struct {
	Attempt
	Ticket string   `json:"ticket"`
	Tools  []string `json:"tools"`
}

type auditor struct {
	env      Env
	r        *Run
	header   ledger.Header
	attempts []auditAttempt
	sessions map[string]*session.State // by session dir
	rep      *AuditReport
}

// Audit recomputes, from the run ledger, the stage session ledgers, the artifacts and git
// alone — never from what a model said — the facts of a delivery run (README, "rein run
// audit"), in order: every attempt's session is fresh; review models differ from the
// ticket's writer models; review sessions were offered only read tools and called no other;
// no review session holds a line of a writer session's prose; every accepted ticket's
// recorded start is the one its dependencies' accepted candidates give, and its candidate
// descends from that start with its diff taken against it; every accepted candidate's
// digest matches its frozen commit; every approval is bound to the digest of the artifact it
// approved; the run continued under the lock it started with. It writes nothing but, for a
// ticket with several dependencies, the objects of the start merge it computes again, which
// git already holds for a run whose records are intact (worktree.Repo.Start). A violation
// returns the report and an *AuditError naming the first.
func Audit(ctx context.Context, env Env, id string) (*AuditReport, error) {
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	a := &auditor{env: env, r: r, header: l.Header(), sessions: map[string]*session.State{},
		rep: &AuditReport{SchemaVersion: AuditSchemaVersion, RunID: id, Checks: []AuditCheck{}, Violations: []AuditViolation{}, History: HistoryNote}}
	for rec, err := range l.Records() {
		if err != nil {
			return nil, runLedgerError(id, runDir(env.Home, id), err)
		}
		if rec.Kind == KindStageAttempt {
			var at auditAttempt
			if err := json.Unmarshal(rec.Body, &at); err != nil {
				return nil, fmt.Errorf("run %s: record %d: %w: %w", id, rec.Seq, ledger.ErrCorrupt, err)
			}
			a.attempts = append(a.attempts, at)
		}
	}
	// The ticket loop's writer and review attempts are ticket.* records (see ticket.go).
	for _, tk := range r.Tickets.order {
		t := r.Tickets.byID[tk]
		for _, ta := range slices.Concat(t.Writers, t.Reviews) {
			a.attempts = append(a.attempts, auditAttempt{Attempt: ta.Attempt, Ticket: ta.Ticket, Tools: ta.Tools})
		}
	}
	a.check(AuditSessionsFresh, a.sessionsFresh)
	a.check(AuditModelsDistinct, a.modelsDistinct)
	a.check(AuditReviewReadOnly, a.reviewReadOnly)
	a.check(AuditReviewIsolated, a.reviewIsolated)
	a.check(AuditTicketStarts, func(v func(string, string)) int { return a.ticketStarts(ctx, v) })
	a.check(AuditCandidatesFrozen, func(v func(string, string)) int { return a.candidatesFrozen(ctx, v) })
	a.check(AuditApprovalsBound, a.approvalsBound)
	a.check(AuditSameLock, a.sameLock)
	a.rep.Passed = len(a.rep.Violations) == 0
	if !a.rep.Passed {
		return a.rep, &AuditError{RunID: id, First: a.rep.Violations[0], Count: len(a.rep.Violations)}
	}
	return a.rep, nil
}

func (a *auditor) check(name string, f func(violate func(subject, detail string)) int) {
	before := len(a.rep.Violations)
	n := f(func(subject, detail string) {
		a.rep.Violations = append(a.rep.Violations, AuditViolation{Check: name, Subject: subject, Detail: detail})
	})
	a.rep.Checks = append(a.rep.Checks, AuditCheck{Name: name, Passed: len(a.rep.Violations) == before, Checked: n})
}

func (at auditAttempt) subject() string {
	s := fmt.Sprintf("%s attempt %d", at.Stage, at.Attempt.Attempt)
	if at.Ticket != "" {
		s = "ticket " + at.Ticket + " " + s
	}
	return s
}

// session loads an attempt's session ledger (nil when the attempt made none).
func (a *auditor) session(at auditAttempt) (*session.State, error) {
	sa := at.Session
	if sa.Seq == 0 {
		return nil, nil
	}
	if st, ok := a.sessions[sa.Dir]; ok {
		return st, nil
	}
	rel := filepath.FromSlash(sa.Dir)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("its session directory %s is not under $REIN_HOME", sa.Dir)
	}
	st, _, err := session.LoadAs(filepath.Join(a.env.Home, rel), sa.ID)
	if err != nil {
		return nil, fmt.Errorf("its session %s ($REIN_HOME/%s) cannot be read: %w", sa.ID, sa.Dir, err)
	}
	a.sessions[sa.Dir] = st
	return st, nil
}

// requestPrefix is the text an attempt's one request must start with.
func (a *auditor) requestPrefix(at auditAttempt) string {
	switch at.Stage {
	case auditWriterStage:
		return "Ticket writer request for run " + a.r.ID
	case auditReviewStage:
		return "Ticket review request for run " + a.r.ID
	}
	return fmt.Sprintf("%s: stage %s, attempt %d.", RequestPrefix(a.r.ID), at.Stage, at.Attempt.Attempt)
}

// sessionsFresh: no parent session, no forked entry, exactly one user message — the first
// entry, the attempt's request with its prefix.
func (a *auditor) sessionsFresh(violate func(string, string)) int {
	n := 0
	for _, at := range a.attempts {
		st, err := a.session(at)
		if err != nil {
			violate(at.subject(), err.Error())
			continue
		}
		if st == nil {
			continue
		}
		n++
		if p := st.Header.Bindings[session.BindParent]; p != "" {
			violate(at.subject(), "its session "+at.Session.ID+" was forked from session "+p)
			continue
		}
		var roots, users []*session.Entry
		for _, e := range sortedEntries(st) {
			if e.Forked {
				violate(at.subject(), "its session holds entry "+e.ID+", copied from another session")
			}
			if e.Parent == "" {
				roots = append(roots, e)
			}
			if e.Message.Role == llm.RoleUser {
				users = append(users, e)
			}
		}
		prefix := a.requestPrefix(at)
		switch {
		case len(roots) != 1 || roots[0].Message.Role != llm.RoleUser:
			violate(at.subject(), fmt.Sprintf("its session has %d first entries; a fresh session starts with its one request", len(roots)))
		case !strings.HasPrefix(messageText(roots[0].Message), prefix):
			violate(at.subject(), fmt.Sprintf("its session's first message does not start with %q", prefix))
		case len(users) != 1:
			violate(at.subject(), fmt.Sprintf("its session holds %d user messages; only the request may be one", len(users)))
		}
	}
	return n
}

func sortedEntries(st *session.State) []*session.Entry {
	es := slices.Collect(maps.Values(st.Entries))
	slices.SortFunc(es, func(x, y *session.Entry) int { return int(x.Seq - y.Seq) })
	return es
}

func messageText(m llm.Message) string {
	var b strings.Builder
	for _, p := range m.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}

// sessionModels are the "provider/model" names of a session's answers.
func sessionModels(st *session.State) []string {
	var out []string
	for _, e := range sortedEntries(st) {
		if m := e.Message; m.Role == llm.RoleAssistant && m.Model != "" {
			if name := m.Provider + "/" + m.Model; !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// modelsDistinct: per ticket, the models its review sessions answered with (and the
// ticket.accepted record names) are none of the models its writer sessions answered with.
func (a *auditor) modelsDistinct(violate func(string, string)) int {
	writers, reviewers := map[string][]string{}, map[string][]string{}
	add := func(m map[string][]string, t string, names ...string) {
		for _, n := range names {
			if n != "" && n != "/" && !slices.Contains(m[t], n) {
				m[t] = append(m[t], n)
			}
		}
	}
	for _, at := range a.attempts {
		st, err := a.session(at)
		if err != nil || st == nil || at.Ticket == "" {
			continue
		}
		switch at.Stage {
		case auditWriterStage:
			add(writers, at.Ticket, sessionModels(st)...)
		case auditReviewStage:
			add(reviewers, at.Ticket, sessionModels(st)...)
		}
	}
	for t, acc := range a.r.Accepted {
		add(writers, t, acc.WriterModel)
		add(reviewers, t, acc.ReviewModel)
	}
	tickets := slices.Sorted(maps.Keys(reviewers))
	for _, t := range tickets {
		for _, m := range reviewers[t] {
			if slices.Contains(writers[t], m) {
				violate("ticket "+t, "model "+m+" reviewed the ticket and also wrote it ("+BlockReviewModelSame+")")
			}
		}
	}
	return len(tickets)
}

// BlockReviewModelSame is the contract's name for a review model equal to a writer's.
const BlockReviewModelSame = "review_model_must_differ_from_writer"

// reviewReadOnly: every review attempt records the tools its session was offered, all of
// them read tools or the review contract tool, and its session called no other.
func (a *auditor) reviewReadOnly(violate func(string, string)) int {
	n := 0
	for _, at := range a.attempts {
		if at.Stage != auditReviewStage {
			continue
		}
		n++
		if at.Tools == nil {
			violate(at.subject(), "its stage.attempt record names no tool surface, so read-only cannot be shown")
		}
		for _, t := range at.Tools {
			if !reviewTool(t) {
				violate(at.subject(), "its session was offered tool "+t)
			}
		}
		st, err := a.session(at)
		if err != nil || st == nil {
			continue
		}
		for _, e := range sortedEntries(st) {
			for _, p := range e.Message.Content {
				if p.Call != nil && !reviewTool(p.Call.Name) {
					violate(at.subject(), fmt.Sprintf("its session called %s (entry %s)", p.Call.Name, e.ID))
				}
			}
		}
	}
	return n
}

// reviewIsolated: no review session's user message or tool result holds a line (of at least
// minCanaryLine bytes) of any writer session's prose (text and thinking of its answers).
func (a *auditor) reviewIsolated(violate func(string, string)) int {
	var lines []string
	for _, at := range a.attempts {
		if at.Stage != auditWriterStage {
			continue
		}
		st, err := a.session(at)
		if err != nil || st == nil {
			continue
		}
		for _, e := range sortedEntries(st) {
			if e.Message.Role != llm.RoleAssistant {
				continue
			}
			for l := range strings.Lines(messageText(e.Message)) {
				if l = strings.TrimSpace(l); len(l) >= minCanaryLine && !slices.Contains(lines, l) {
					lines = append(lines, l)
				}
			}
		}
	}
	n := 0
	for _, at := range a.attempts {
		if at.Stage != auditReviewStage {
			continue
		}
		st, err := a.session(at)
		if err != nil || st == nil {
			continue
		}
		n++
		for _, e := range sortedEntries(st) {
			if e.Message.Role == llm.RoleAssistant {
				continue
			}
			text := messageText(e.Message)
			for _, l := range lines {
				if strings.Contains(text, l) {
					violate(at.subject(), fmt.Sprintf("its entry %s holds text of a writer session: %q", e.ID, l))
					break
				}
			}
		}
	}
	return n
}

// candidatesFrozen: every accepted candidate's digest is the digest of its commit, its diff
// (recomputed from the repository) and its candidate artifact (as it is on disk).
func (a *auditor) candidatesFrozen(ctx context.Context, violate func(string, string)) int {
	if len(a.r.Accepted) == 0 {
		return 0
	}
	repo, err := worktree.OpenRepo(ctx, a.r.Project)
	if err != nil {
		violate("repository", err.Error())
		return 0
	}
	for _, t := range slices.Sorted(maps.Keys(a.r.Accepted)) {
		acc := a.r.Accepted[t]
		c := acc.Candidate
		subject := "ticket " + t + " candidate " + c.Digest
		data, err := a.r.readRef(c.Artifact)
		if err != nil {
			violate(subject, "candidate artifact: "+err.Error())
			continue
		}
		art, err := artifact.NewReference(c.Artifact.ID, c.Artifact.Path, data)
		if err != nil {
			violate(subject, "candidate artifact: "+err.Error())
			continue
		}
		d, err := repo.DiffDigest(ctx, acc.Base, c.Head)
		switch {
		case err != nil:
			violate(subject, "its commit cannot be read: "+err.Error())
		case d != c.DiffDigest:
			violate(subject, fmt.Sprintf("the diff %s..%s has digest %s, the record %s", acc.Base, c.Head, d, c.DiffDigest))
		case worktree.CandidateDigest(c.Head, d, string(art.Digest)) != c.Digest:
			violate(subject, "the digest of its commit, diff and candidate artifact is "+worktree.CandidateDigest(c.Head, d, string(art.Digest)))
		}
	}
	return len(a.r.Accepted)
}

// approvalsBound: every approval names the digest of the artifact it approved, and that
// artifact's body has that digest now.
func (a *auditor) approvalsBound(violate func(string, string)) int {
	n := 0
	for _, gate := range slices.Sorted(maps.Keys(a.r.Gates)) {
		for i, d := range a.r.Gates[gate] {
			if d.Decision != GateApproved {
				continue
			}
			n++
			subject := fmt.Sprintf("gate %s approval %d by %s", gate, i+1, d.By)
			if d.Artifact.Digest != d.Digest {
				violate(subject, fmt.Sprintf("it approved digest %s but names artifact %s with digest %s", d.Digest, d.Artifact.Path, d.Artifact.Digest))
				continue
			}
			data, err := readAny(a.r.Project, d.Artifact.Path)
			if err != nil {
				violate(subject, "the approved artifact: "+err.Error())
				continue
			}
			ref, err := artifact.NewReference(d.Artifact.ID, d.Artifact.Path, data)
			if err != nil || ref.Digest != d.Digest {
				violate(subject, fmt.Sprintf("the approved artifact %s no longer has the approved digest %s (now %s)", d.Artifact.Path, d.Digest, orDash(string(ref.Digest))))
			}
		}
	}
	return n
}

// sameLock: the execution lock is the one the run ledger's header binds, its amendments are
// intact, and the lock the run reads (after its relocks) is the one Status and resume use.
func (a *auditor) sameLock(violate func(string, string)) int {
	ref, ok := a.r.ref(ArtLock)
	if !ok {
		violate("execution lock", "the run ledger names no execution lock")
		return 1
	}
	if b := a.header.Bindings["lock"]; b != string(ref.Digest) {
		violate("execution lock", fmt.Sprintf("the run ledger's header binds lock %s, run.started names %s", b, ref.Digest))
	}
	data, err := a.r.readArtifact(ArtLock)
	if err != nil {
		violate("execution lock", err.Error())
		return 1
	}
	if d, err := artifact.NewReference(ArtLock, ref.Path, data); err != nil || d.Digest != ref.Digest {
		violate("execution lock", "its body no longer has the recorded digest "+string(ref.Digest))
	}
	var lock Lock
	if err := decodeArtifact(data, &lock); err != nil {
		violate("execution lock", err.Error())
		return 1
	}
	if _, err := a.r.effectiveLock(lock); err != nil {
		violate("execution lock amendment", err.Error())
	}
	return 1 + len(a.r.Relock.Amendments)
}

func readAny(project, path string) ([]byte, error) { return os.ReadFile(resolve(project, path)) }

// WriteText writes the audit for a terminal: one line a check, then the violations.
func (rep *AuditReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "audit of run %s: %s\n", rep.RunID, map[bool]string{true: "passed", false: "FAILED"}[rep.Passed])
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "  %s=%s (%d checked)\n", c.Name, map[bool]string{true: "pass", false: "fail"}[c.Passed], c.Checked)
	}
	for _, v := range rep.Violations {
		fmt.Fprintf(w, "violation: %s: %s: %s\n", v.Check, v.Subject, v.Detail)
	}
	fmt.Fprintf(w, "%s\n", rep.History)
}
