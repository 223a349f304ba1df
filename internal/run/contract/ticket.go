package contract

import (
	"fmt"
	"strings"
)

// TicketReview is the Ticket Review contract: the review of one frozen candidate, bound to
// its digest. A finding's severity is the list that holds it: a blocking finding keeps the
// ticket from acceptance, an advisory one does not.
type TicketReview struct {
	CandidateDigest  string    `json:"candidateDigest" limit:"128" jsonschema:"the frozen candidate's digest exactly as the review request gives it"`
	BlockingFindings []Finding `json:"blockingFindings" jsonschema:"defects the ticket must not be accepted with; [] when there are none"`
	AdvisoryFindings []Finding `json:"advisoryFindings" jsonschema:"observations that do not block acceptance; [] when there are none"`
	Conclusion       string    `json:"conclusion" enum:"accept,request-changes" jsonschema:"accept when there is no blocking finding, request-changes when there is one"`
}

// Review conclusions.
const (
	ConclusionAccept         = "accept"
	ConclusionRequestChanges = "request-changes"
)

// MaxFindingLine bounds a finding's line number.
const MaxFindingLine = 10_000_000

// Finding is one review observation.
type Finding struct {
	ID        string `json:"id" limit:"128" jsonschema:"unique id within the review"`
	Path      string `json:"path,omitempty" limit:"1024" jsonschema:"the file the finding is about: relative to the worktree, slash-separated"`
	Line      int    `json:"line,omitempty" min:"1" max:"10000000" jsonschema:"the 1-based line in path the finding is about"`
	Statement string `json:"statement" limit:"4096" jsonschema:"what is wrong and why, so that a writer can act on it"`
}

// TicketCandidate is a writer's submission of its attempt's work as the ticket's candidate.
// What rein checks itself — a non-empty tracked diff, the required verification commands
// passing when rein runs them, the budget — is not in it: the writer claims nothing.
type TicketCandidate struct {
	TicketID        string   `json:"ticketId" limit:"128" jsonschema:"the id of the ticket this attempt implements"`
	Summary         string   `json:"summary" limit:"4096" jsonschema:"what the change does, for the reviewer"`
	VerificationIDs []string `json:"verificationIds,omitempty" limit:"128" jsonschema:"ids of optional approved verification commands rein should also run; the required ones always run"`
}

// ticketRefs is what a ticket contract binds to.
type ticketRefs struct {
	candidate string          // the frozen candidate's digest (review)
	id        string          // the attempt's ticket (candidate)
	commands  map[string]bool // the approved verification command ids (candidate)
}

// WithCandidate returns a copy of r that binds a review to the frozen candidate's digest:
// candidateDigest must equal it.
func (r Refs) WithCandidate(digest string) Refs {
	r.ticket.candidate = digest
	return r
}

// WithTicket returns a copy of r that binds a candidate submission to the attempt's ticket
// id and to the ids of the approved verification commands it may name.
func (r Refs) WithTicket(id string, commandIDs ...string) Refs {
	r.ticket.id = id
	r.ticket.commands = make(map[string]bool, len(commandIDs))
	for _, c := range commandIDs {
		r.ticket.commands[c] = true
	}
	return r
}

func reviewRules(rv *TicketReview, refs Refs, ps *problems) {
	if refs.ticket.candidate == "" || rv.CandidateDigest != refs.ticket.candidate {
		ps.add(CodeReviewCandidateMismatch, "candidateDigest", "%q is not the digest of the frozen candidate under review; copy it from the review request", rv.CandidateDigest)
	}
	seen := ids{}
	for _, l := range []struct {
		key string
		fs  []Finding
	}{{"blockingFindings", rv.BlockingFindings}, {"advisoryFindings", rv.AdvisoryFindings}} {
		for i, f := range l.fs {
			p := fmt.Sprintf("%s[%d]", l.key, i)
			seen.add(ps, p+".id", f.ID)
			if f.Path != "" && !cleanRelPath(f.Path) {
				ps.add(CodeReviewFindingPath, p+".path", "%q is not a clean path relative to the worktree (slash-separated, no .., no leading /)", f.Path)
			}
			if f.Line != 0 && f.Path == "" {
				ps.add(CodeReviewLineWithoutPath, p+".line", "a line needs the path it is in")
			}
		}
	}
	switch blocking := len(rv.BlockingFindings) > 0; {
	case blocking && rv.Conclusion == ConclusionAccept:
		ps.add(CodeReviewConclusion, "conclusion", "%q with %d blocking finding(s); conclude %q or move them to advisoryFindings", ConclusionAccept, len(rv.BlockingFindings), ConclusionRequestChanges)
	case !blocking && rv.Conclusion == ConclusionRequestChanges:
		ps.add(CodeReviewConclusion, "conclusion", "%q without a blocking finding; state what blocks acceptance in blockingFindings, or conclude %q", ConclusionRequestChanges, ConclusionAccept)
	}
}

// cleanRelPath reports whether p is a slash-separated relative path with no empty, "." or
// ".." element and no backslash.
func cleanRelPath(p string) bool {
	if strings.ContainsRune(p, '\\') {
		return false
	}
	for el := range strings.SplitSeq(p, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

func candidateRules(c *TicketCandidate, refs Refs, ps *problems) {
	if refs.ticket.id == "" || c.TicketID != refs.ticket.id {
		ps.add(CodeCandidateTicketMismatch, "ticketId", "%q is not the ticket of this attempt (%q)", c.TicketID, refs.ticket.id)
	}
	seen := ids{}
	for i, id := range c.VerificationIDs {
		p := fmt.Sprintf("verificationIds[%d]", i)
		seen.add(ps, p, id)
		if !refs.ticket.commands[id] {
			ps.add(CodeCandidateVerificationUnbound, p, "%q is not the id of an approved verification command", id)
		}
	}
}
