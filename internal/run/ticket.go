package run

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/lazyre"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/contract"
)

// The per-ticket stages of the delivery workflow.
const (
	StageTicketExecution    = "ticket-execution"
	StageTicketReview       = "ticket-review"
	StageTicketVerification = "ticket-verification"
	StageTicketAcceptance   = "ticket-acceptance"
)

// The ticket records of the run ledger (see doc.go, "Tickets").
const (
	KindTicketScheduled      = "ticket.scheduled"
	KindTicketLease          = "ticket.lease"
	KindTicketLeaseReclaimed = "ticket.lease.reclaimed"
	KindTicketLeaseReleased  = "ticket.lease.released"
	KindTicketWriterStarted  = "ticket.writer.started"
	KindTicketFreezeIntent   = "ticket.freeze.intent"
	KindTicketCandidate      = "ticket.candidate"
	KindTicketWriterAttempt  = "ticket.writer.attempt"
	KindTicketReviewStarted  = "ticket.review.started"
	KindTicketReviewAttempt  = "ticket.review.attempt"
	KindTicketVerification   = "ticket.verification"
)

// The ticket blockers whose names are part of the contract.
const (
	BlockWriterPathEscape       = "ticket_writer_workspace_path_escape_blocked"
	BlockWriterUnapprovedBash   = "ticket_writer_unapproved_bash_command_blocked"
	BlockReviewMutation         = "ticket_review_mutation_tool_blocked"
	BlockReviewCandidateStale   = "ticket_review_candidate_stale"
	BlockReviewModelNotDistinct = "review_model_must_differ_from_writer"
	// BlockTicketFailed: a ticket used its writer attempts without an accepted candidate.
	BlockTicketFailed = "run_ticket_failed"
	// BlockBaseDrift: the delivery branch is not at the recorded base commit, or cannot be
	// made there.
	BlockBaseDrift = "run_base_drift"
	// BlockTicketLeaseHeld: a ticket's lease is held by a process on another host, whose
	// liveness rein cannot check; it is never reclaimed automatically.
	BlockTicketLeaseHeld = "run_ticket_lease_held"
	// BlockTicketInvalid: an approved ticket's id cannot name a worktree directory.
	BlockTicketInvalid = "run_ticket_id_invalid"
)

// MaxTicketAttempts bounds the writer attempts of one ticket; the writer and review budgets
// bound them too.
const MaxTicketAttempts = 3

// ticketID is the form of a ticket id rein can run: it names a directory and goes into
// commit trailers and session ids.
var ticketID = lazyre.Regexp{Expr: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`}

// TicketSchedule is the body of ticket.scheduled: the fan-out decision made once before any
// ticket starts, with the base the delivery branch is made from.
type TicketSchedule struct {
	Plan     artifact.Reference `json:"plan"`
	Base     string             `json:"base"`
	Branch   string             `json:"branch"`
	Parallel int                `json:"parallel"`
	Batches  [][]string         `json:"batches"`
	FanOut   string             `json:"fanOut"`
}

// TicketAttempt is the body of ticket.writer.attempt and ticket.review.attempt: a settled
// attempt of a ticket's writer or reviewer, with the stage fields of [Attempt].
type TicketAttempt struct {
	Ticket string `json:"ticket"`
	Attempt
	Model string `json:"model"`
	// Candidate is the digest of the candidate the writer froze, or the reviewer reviewed.
	Candidate string `json:"candidate,omitempty"`
	// Tools are the tools the attempt's session was offered (what the audit checks).
	Tools []string `json:"tools,omitempty"`
	// Refusals counts the tool calls the attempt's session was refused, by blocker code.
	Refusals map[string]int `json:"refusals,omitempty"`
	// Review: the number of findings and the conclusion.
	Blocking   int    `json:"blocking,omitempty"`
	Advisory   int    `json:"advisory,omitempty"`
	Conclusion string `json:"conclusion,omitempty"`
}

// ticketStarted is the body of ticket.writer.started and ticket.review.started.
type ticketStarted struct {
	Ticket  string        `json:"ticket"`
	Attempt int           `json:"attempt"`
	Session SessionAnchor `json:"session"`
	Model   string        `json:"model"`
	// Parent is the commit a writer attempt starts from; Candidate the digest a review reviews.
	Parent    string               `json:"parent,omitempty"`
	Candidate string               `json:"candidate,omitempty"`
	Inputs    []artifact.Reference `json:"inputs,omitempty"`
}

// freezeIntent is the body of ticket.freeze.intent, recorded before the freeze commit.
type freezeIntent struct {
	Ticket    string `json:"ticket"`
	Attempt   int    `json:"attempt"`
	Parent    string `json:"parent"`
	SessionID string `json:"sessionId"`
	// Artifact is the candidate artifact written before the commit; Verification what rein
	// ran before it.
	Artifact     *artifact.Reference `json:"artifact"`
	Verification []CommandResult     `json:"verification"`
}

// CandidateRecord is the body of ticket.candidate: a frozen candidate bound to its artifact.
type CandidateRecord struct {
	Ticket       string             `json:"ticket"`
	Attempt      int                `json:"attempt"`
	Base         string             `json:"base"`
	Parent       string             `json:"parent"`
	Head         string             `json:"head"`
	DiffDigest   string             `json:"diffDigest"`
	Digest       string             `json:"digest"`
	Files        []string           `json:"files"`
	Artifact     artifact.Reference `json:"artifact"`
	Verification []CommandResult    `json:"verification"`
}

// TicketVerification is the body of ticket.verification.
type TicketVerification struct {
	Ticket    string             `json:"ticket"`
	Attempt   int                `json:"attempt"`
	Candidate string             `json:"candidate"`
	Commit    string             `json:"commit"`
	Passed    bool               `json:"passed"`
	Results   []CommandResult    `json:"results"`
	Artifact  artifact.Reference `json:"artifact"`
}

// ticketLeaseBody is the body of ticket.lease, ticket.lease.released and (with Evidence)
// ticket.lease.reclaimed.
type ticketLeaseBody struct {
	Ticket string `json:"ticket"`
	Lease
	SessionID string `json:"sessionId"`
	Evidence  string `json:"evidence,omitempty"`
}

// ticketRun is one ticket's state as rebuilt from the run ledger.
type ticketRun struct {
	ID            string
	Writers       []TicketAttempt
	Reviews       []TicketAttempt
	Candidates    []CandidateRecord
	Verifications []TicketVerification
	Accepted      *TicketAccepted
	// Start is the ticket's recorded start commit (ticket.start, ticket_start.go).
	Start *TicketStart
	// Lease is the ticket's lease not yet released; OpenWriter and OpenReview the attempts
	// started and not settled; Intent the last freeze intent.
	Lease                  *ticketLeaseBody
	OpenWriter, OpenReview *ticketStarted
	Intent                 *freezeIntent
}

// ticketState is every ticket's state. While the tickets of a batch run at the same time
// (ticket_parallel.go), each ticket's goroutine alone touches its ticketRun; byID is not
// written (every ticket of the schedule is in it before a batch starts); what they share —
// Run.StageAttempts, Run.Blockers and live — is read and written under mu.
type ticketState struct {
	Schedule *TicketSchedule
	byID     map[string]*ticketRun
	// order is the schedule's order (a ticket.scheduled record adds every ticket in it).
	order []string
	mu    sync.Mutex
	// live are the ticket sessions running in this process, by session id.
	live map[string]*liveSession
}

func (s *ticketState) get(id string) *ticketRun {
	if s.byID == nil {
		s.byID = map[string]*ticketRun{}
	}
	t := s.byID[id]
	if t == nil {
		t = &ticketRun{ID: id}
		s.byID[id] = t
		s.order = append(s.order, id)
	}
	return t
}

// applyTicket applies a ticket.* record.
func (r *Run) applyTicket(rec ledger.Record) error {
	dec := func(v any) error {
		d := json.NewDecoder(strings.NewReader(string(rec.Body)))
		return d.Decode(v)
	}
	ts := &r.Tickets
	switch rec.Kind {
	case KindTicketScheduled:
		var b TicketSchedule
		if err := dec(&b); err != nil {
			return err
		}
		ts.Schedule = &b
		for _, id := range slices.Concat(b.Batches...) {
			ts.get(id)
		}
	case KindTicketLease, KindTicketLeaseReleased, KindTicketLeaseReclaimed:
		var b ticketLeaseBody
		if err := dec(&b); err != nil {
			return err
		}
		t := ts.get(b.Ticket)
		if rec.Kind == KindTicketLease {
			t.Lease = &b
		} else {
			t.Lease = nil
		}
	case KindTicketWriterStarted, KindTicketReviewStarted:
		var b ticketStarted
		if err := dec(&b); err != nil {
			return err
		}
		if rec.Kind == KindTicketWriterStarted {
			ts.get(b.Ticket).OpenWriter = &b
		} else {
			ts.get(b.Ticket).OpenReview = &b
		}
	case KindTicketFreezeIntent:
		var b freezeIntent
		if err := dec(&b); err != nil {
			return err
		}
		ts.get(b.Ticket).Intent = &b
	case KindTicketCandidate:
		var b CandidateRecord
		if err := dec(&b); err != nil {
			return err
		}
		t := ts.get(b.Ticket)
		t.Candidates = append(t.Candidates, b)
	case KindTicketWriterAttempt, KindTicketReviewAttempt:
		var b TicketAttempt
		if err := dec(&b); err != nil {
			return err
		}
		t := ts.get(b.Ticket)
		if rec.Kind == KindTicketWriterAttempt {
			t.Writers = append(t.Writers, b)
			t.OpenWriter = nil
		} else {
			t.Reviews = append(t.Reviews, b)
			t.OpenReview = nil
		}
		// Ticket attempts count against their role's budget and show in the metrics as the
		// stage's attempts.
		r.StageAttempts[b.Stage] = append(r.StageAttempts[b.Stage], b.Attempt)
	case KindTicketVerification:
		var b TicketVerification
		if err := dec(&b); err != nil {
			return err
		}
		t := ts.get(b.Ticket)
		t.Verifications = append(t.Verifications, b)
	case KindTicketStart:
		return ts.applyTicketStart(rec.Body)
	case KindTicketAccepted:
		var b TicketAccepted
		if err := dec(&b); err != nil {
			return err
		}
		ts.get(b.Ticket).Accepted = &b
		return r.applyTicketAccepted(rec.Body)
	default:
		return fmt.Errorf("unknown ticket record kind")
	}
	return nil
}

// candidate returns the ticket's recorded candidate of writer attempt n.
func (t *ticketRun) candidate(n int) *CandidateRecord {
	for i := range t.Candidates {
		if t.Candidates[i].Attempt == n {
			return &t.Candidates[i]
		}
	}
	return nil
}

// lastCandidate is the latest recorded candidate, or nil.
func (t *ticketRun) lastCandidate() *CandidateRecord {
	if len(t.Candidates) == 0 {
		return nil
	}
	return &t.Candidates[len(t.Candidates)-1]
}

// writerAttempts is the number of writer attempts started (settled or not).
func (t *ticketRun) writerAttempts() int {
	n := len(t.Writers)
	if t.OpenWriter != nil {
		n = max(n, t.OpenWriter.Attempt)
	}
	return n
}

// reviewsOf returns the settled reviews of the candidate with digest d.
func (t *ticketRun) reviewsOf(d string) []TicketAttempt {
	return slices.DeleteFunc(slices.Clone(t.Reviews), func(a TicketAttempt) bool { return a.Candidate != d })
}

// verificationOf returns the latest verification of the candidate with digest d, or nil.
func (t *ticketRun) verificationOf(d string) *TicketVerification {
	for i := len(t.Verifications) - 1; i >= 0; i-- {
		if t.Verifications[i].Candidate == d {
			return &t.Verifications[i]
		}
	}
	return nil
}

// writerModels are the models of every writer attempt of the ticket.
func (t *ticketRun) writerModels() []string {
	var ms []string
	for _, w := range t.Writers {
		if !slices.Contains(ms, w.Model) {
			ms = append(ms, w.Model)
		}
	}
	if t.OpenWriter != nil && !slices.Contains(ms, t.OpenWriter.Model) {
		ms = append(ms, t.OpenWriter.Model)
	}
	return ms
}

// modelName names a role's model as ticket records keep it: provider/model.
func modelName(p ModelPolicy) string { return p.Provider + "/" + p.Model }

// approvedPlan returns the ticket plan the Ticket Plan Gate approved.
func (r *Run) approvedPlan() (artifact.Reference, *contract.TicketPlan, error) {
	ds := r.Gates[GateTicketPlan]
	if len(ds) == 0 || ds[len(ds)-1].Decision != GateApproved {
		return artifact.Reference{}, nil, fmt.Errorf("run %s has no approved ticket plan", r.ID)
	}
	d := ds[len(ds)-1]
	data, err := r.readRef(d.Artifact)
	if err != nil {
		return d.Artifact, nil, fmt.Errorf("the approved ticket plan is stale: %w", err)
	}
	if ref, err := artifact.NewReference(d.Artifact.ID, d.Artifact.Path, data); err != nil || ref.Digest != d.Digest {
		return d.Artifact, nil, fmt.Errorf("the approved ticket plan %s is stale: its digest is not the approved %s", d.Artifact.Path, d.Digest)
	}
	var plan contract.TicketPlan
	if err := decodeArtifact(data, &plan); err != nil {
		return d.Artifact, nil, fmt.Errorf("%s: %w", d.Artifact.Path, err)
	}
	return d.Artifact, &plan, nil
}
