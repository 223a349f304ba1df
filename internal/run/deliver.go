package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// ArtDeliverySummary is the artifact id of the delivery summary the Run Acceptance gate
// decides on.
const ArtDeliverySummary = "delivery-summary"

// DeliverySummary is the digest-bound content of the delivery summary: the branch and its
// head, each ticket's candidate and merge, and the Full Run Verification results.
type DeliverySummary struct {
	Branch       string               `json:"branch"`
	Base         string               `json:"base"`
	Head         string               `json:"head"`
	Tickets      []SummaryTicket      `json:"tickets"`
	Resolution   []string             `json:"resolution"`
	Checklist    artifact.Digest      `json:"checklist"`
	Verification SummaryVerification  `json:"verification"`
	Artifacts    []artifact.Reference `json:"artifacts"`
}

// SummaryTicket is one delivered ticket.
type SummaryTicket struct {
	Ticket      string `json:"ticket"`
	Candidate   string `json:"candidate"`
	Commit      string `json:"commit"`
	Merge       string `json:"merge"`
	WriterModel string `json:"writerModel"`
	ReviewModel string `json:"reviewModel"`
}

// SummaryVerification is Full Run Verification's outcome in the summary.
type SummaryVerification struct {
	Artifact artifact.Digest `json:"artifact"`
	Passed   bool            `json:"passed"`
	Commands []SummaryExit   `json:"commands"`
}

// SummaryExit is one verification command's id and exit code.
type SummaryExit struct {
	ID       string `json:"id"`
	ExitCode int    `json:"exitCode"`
}

// DeliveryReady is the body of the delivery.ready record: the delivered branch and its HEAD,
// and the summary the run gate approved. rein never pushes, merges it elsewhere or deploys.
type DeliveryReady struct {
	Branch  string             `json:"branch"`
	Head    string             `json:"head"`
	Summary artifact.Reference `json:"summary"`
	At      time.Time          `json:"at"`
}

// writeSummary writes delivery-summary[-n].md (n: the Full Run Verification attempt) and its
// delivery.summary record. A summary a crash left without its record is recorded as it is
// when it summarizes the current verification.
func (r *Run) writeSummary(_ context.Context, env Env, l *ledger.Ledger) error {
	check := r.Delivery.Checks[StageFullVerification]
	in := r.Delivery.Integration
	if check.Artifact == nil || in == nil {
		return fmt.Errorf("run %s has no passing Full Run Verification to summarize", r.ID)
	}
	if s := r.Delivery.Summary; s != nil && s.Path == RunsDir+"/"+r.ID+"/"+attemptFile(ArtDeliverySummary)(check.Attempt) {
		return nil
	}
	rel := RunsDir + "/" + r.ID + "/" + attemptFile(ArtDeliverySummary)(check.Attempt)
	var ref artifact.Reference
	if data, err := os.ReadFile(filepath.Join(r.Project, filepath.FromSlash(rel))); err == nil {
		var s DeliverySummary
		if err := decodeArtifact(data, &s); err != nil || s.Verification.Artifact != check.Artifact.Digest || s.Head != in.Head {
			return &BlockedError{RunID: r.ID, Blockers: []Blocker{{Code: BlockUnknownOutcome, Stage: StageFullVerification,
				Detail:   fmt.Sprintf("%s exists but does not summarize the current verification %s", rel, check.Artifact.Path),
				Recovery: []string{"remove " + rel + ", then run `rein run next " + r.ID + "`", "abort the run (rein run abort " + r.ID + ")"}}}}
		}
		if ref, err = artifact.NewReference(ArtDeliverySummary, rel, data); err != nil {
			return err
		}
	} else {
		s, err := r.summary(*check.Artifact)
		if err != nil {
			return err
		}
		if ref, err = r.writeStageArtifact(env, ArtDeliverySummary, "Delivery Summary", StageFullVerification, check.Attempt, s); err != nil {
			return err
		}
	}
	env.crash("summary")
	if _, err := l.Append(ledger.Entry{Kind: KindDeliverySummary, Body: summaryBody{Artifact: ref}}); err != nil {
		return err
	}
	r.Delivery.Summary = &ref
	return nil
}

// summary builds the delivery summary from the recorded integration and verification.
func (r *Run) summary(verification artifact.Reference) (DeliverySummary, error) {
	in := r.Delivery.Integration
	data, err := r.readRef(verification)
	if err != nil {
		return DeliverySummary{}, err
	}
	var v VerificationReport
	if err := decodeArtifact(data, &v); err != nil {
		return DeliverySummary{}, fmt.Errorf("%s: %w", verification.Path, err)
	}
	s := DeliverySummary{Branch: in.Branch, Base: in.Base, Head: in.Head, Resolution: in.Resolution, Tickets: []SummaryTicket{},
		Verification: SummaryVerification{Artifact: verification.Digest, Passed: v.Passed, Commands: []SummaryExit{}},
		Artifacts:    []artifact.Reference{verification}}
	if c, ok := r.Delivery.Checks[StageFinalChecklist]; ok && c.Artifact != nil {
		s.Checklist = c.Artifact.Digest
		s.Artifacts = append(s.Artifacts, *c.Artifact)
	}
	for _, m := range in.Merges {
		a := r.Accepted[m.Ticket]
		s.Tickets = append(s.Tickets, SummaryTicket{Ticket: m.Ticket, Candidate: m.Candidate, Commit: m.Commit, Merge: m.Merge, WriterModel: a.WriterModel, ReviewModel: a.ReviewModel})
		s.Artifacts = append(s.Artifacts, a.Candidate.Artifact, a.Review, a.Verification)
	}
	for _, c := range v.Commands {
		s.Verification.Commands = append(s.Verification.Commands, SummaryExit{ID: c.ID, ExitCode: c.ExitCode})
	}
	return s, nil
}

// summaryArtifact is the artifact the run gate decides on.
func (r *Run) summaryArtifact() (*artifact.Reference, bool) {
	return r.Delivery.Summary, r.Delivery.Summary != nil
}

// checkDelivery is what approving the run gate checks besides the digest: the branch is still
// where the summary says and reconciles, so the approval binds what will be delivered.
func (r *Run) checkDelivery(ctx context.Context) error {
	bs, err := r.reconcileGit(ctx, StageRunAcceptance)
	if err != nil {
		return err
	}
	if len(bs) > 0 {
		return &BlockedError{RunID: r.ID, Blockers: bs}
	}
	return nil
}

// recordReady records Delivery Ready: the branch and its HEAD, bound to the approved summary.
func (r *Run) recordReady(env Env, l *ledger.Ledger, summary artifact.Reference) error {
	in := r.Delivery.Integration
	if in == nil {
		return fmt.Errorf("run %s has no recorded integration", r.ID)
	}
	dr := DeliveryReady{Branch: in.Branch, Head: in.Head, Summary: summary, At: env.now().Truncate(time.Second)}
	if _, err := l.Append(ledger.Entry{Kind: KindDeliveryReady, Body: dr}); err != nil {
		return err
	}
	r.Delivery.Ready = &dr
	return nil
}

// deliveryReady is `rein run next` at Delivery Ready: it records what an approval a crash
// interrupted did not, and otherwise says the run is complete.
func (r *Run) deliveryReady(env Env, l *ledger.Ledger) error {
	if r.Delivery.Ready == nil {
		if s := r.Delivery.Summary; s != nil {
			return r.recordReady(env, l, *s)
		}
		return fmt.Errorf("run %s is at Delivery Ready without a delivery summary", r.ID)
	}
	return fmt.Errorf("%w: run %s is complete: delivery branch %s at %s is ready; rein never pushes, merges or deploys it", ErrFinished, r.ID, r.Delivery.Ready.Branch, r.Delivery.Ready.Head)
}

// DeliveryReport is the part of status about the stages after the tickets.
type DeliveryReport struct {
	Branch     string             `json:"branch"`
	Base       string             `json:"base,omitempty"`
	Head       string             `json:"head,omitempty"` // the integrated head
	Merges     []IntegrationMerge `json:"merges"`
	Resolution []string           `json:"resolution"`
	Checks     []CheckReport      `json:"checks"`
	Summary    string             `json:"summary,omitempty"` // the delivery summary's digest
	Ready      bool               `json:"ready"`
}

// CheckReport is one check stage's latest result.
type CheckReport struct {
	Stage    string `json:"stage"`
	Attempt  int    `json:"attempt"`
	Outcome  string `json:"outcome"`
	Artifact string `json:"artifact,omitempty"` // its path
}

// deliveryReport reports the stages after the tickets (nil before Manual Integration) and
// adds their artifacts to rep.
func (r *Run) deliveryReport(rep *Report) *DeliveryReport {
	d := r.Delivery
	if d.Integration == nil && d.Conflict == nil && len(d.Checks) == 0 {
		return nil
	}
	dr := &DeliveryReport{Merges: []IntegrationMerge{}, Resolution: []string{}, Checks: []CheckReport{}, Ready: d.Ready != nil}
	if r.Snapshot != nil {
		dr.Branch = r.Snapshot.Branch
	}
	if in := d.Integration; in != nil {
		dr.Base, dr.Head, dr.Merges, dr.Resolution = in.Base, in.Head, in.Merges, in.Resolution
	}
	for _, s := range []string{StageManualIntegration, StageReconciliation, StageFinalChecklist, StageFullVerification} {
		c, ok := d.Checks[s]
		if !ok {
			continue
		}
		cr := CheckReport{Stage: s, Attempt: c.Attempt, Outcome: c.Outcome}
		if c.Artifact != nil {
			cr.Artifact = c.Artifact.Path
			rep.Artifacts = append(rep.Artifacts, ArtifactReport{c.Artifact.ID, c.Artifact.Path, string(c.Artifact.Digest), string(c.Artifact.FileDigest)})
		}
		dr.Checks = append(dr.Checks, cr)
	}
	if s := d.Summary; s != nil {
		dr.Summary = string(s.Digest)
		rep.Artifacts = append(rep.Artifacts, ArtifactReport{s.ID, s.Path, string(s.Digest), string(s.FileDigest)})
	}
	return dr
}

// deliveryArtifacts are the artifacts the stages after the tickets recorded, for the evidence
// check: the checklists, verifications and summaries.
func (r *Run) deliveryArtifacts() []artifact.Reference {
	var refs []artifact.Reference
	for _, s := range []string{StageFinalChecklist, StageFullVerification} {
		if c, ok := r.Delivery.Checks[s]; ok && c.Artifact != nil {
			refs = append(refs, *c.Artifact)
		}
	}
	if s := r.Delivery.Summary; s != nil && !slices.ContainsFunc(refs, func(o artifact.Reference) bool { return o.Path == s.Path }) {
		refs = append(refs, *s)
	}
	return refs
}
