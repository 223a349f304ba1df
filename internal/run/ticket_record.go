package run

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/artifact"
)

// KindTicketAccepted is the run ledger record of a ticket whose candidate Ticket Acceptance
// accepted (no blocking review finding, verification passed). Its body is a [TicketAccepted];
// once every ticket of the approved plan has one, the run's stage is Manual Integration.
const KindTicketAccepted = "ticket.accepted"

// TicketAccepted is the body of a ticket.accepted record: the ticket, the attempt whose
// candidate was accepted, the commit its worktree was made from, the frozen candidate, the
// review and verification artifacts that accepted it, and the models that wrote and reviewed
// it ("provider/model").
type TicketAccepted struct {
	Ticket       string             `json:"ticket"`
	Attempt      int                `json:"attempt"`
	Base         string             `json:"base"`
	Candidate    AcceptedCandidate  `json:"candidate"`
	Review       artifact.Reference `json:"review"`
	Verification artifact.Reference `json:"verification"`
	WriterModel  string             `json:"writerModel"`
	ReviewModel  string             `json:"reviewModel"`
}

// AcceptedCandidate is a frozen candidate as the run ledger records it: the candidate digest
// (worktree.CandidateDigest of Head, DiffDigest and the candidate artifact's digest), the
// commit, the digest of the diff from the ticket's base, and the candidate artifact.
type AcceptedCandidate struct {
	Digest     string             `json:"digest"`
	Head       string             `json:"head"`
	DiffDigest string             `json:"diffDigest"`
	Artifact   artifact.Reference `json:"artifact"`
}

// decodeStrict decodes a record body that this package wrote, refusing unknown fields.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// applyTicketAccepted rebuilds Run.Accepted: the latest record per ticket wins.
func (r *Run) applyTicketAccepted(body []byte) error {
	var t TicketAccepted
	if err := decodeStrict(body, &t); err != nil {
		return err
	}
	if t.Ticket == "" {
		return fmt.Errorf("a ticket.accepted record names no ticket")
	}
	if r.Accepted == nil {
		r.Accepted = map[string]TicketAccepted{}
	}
	r.Accepted[t.Ticket] = t
	return nil
}
