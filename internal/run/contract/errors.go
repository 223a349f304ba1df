package contract

import (
	"errors"
	"fmt"
	"strings"
)

// Code names one kind of problem with a submitted contract. Codes are stable: the run ledger,
// status and tests match on them.
type Code string

// Codes shared by every contract.
const (
	CodeTooLarge        Code = "contract_too_large"         // the document is over the contract's byte cap
	CodeMalformed       Code = "contract_malformed_json"    // not one JSON object: syntax, invalid UTF-8, duplicate key
	CodeUnknownKey      Code = "contract_unknown_key"       // a key the contract does not declare
	CodeKeyCase         Code = "contract_key_case_mismatch" // a declared key spelled with other letter case
	CodeMissingField    Code = "contract_missing_field"     // a required key is absent
	CodeWrongType       Code = "contract_wrong_type"        // a value of the wrong JSON type (null included)
	CodeTooManyItems    Code = "contract_too_many_items"    // a list over MaxItems
	CodeStringTooLarge  Code = "contract_string_too_large"  // a string over its field's byte cap
	CodeEmptyString     Code = "contract_empty_string"      // an id, title or statement that is empty or blank
	CodeBadEnum         Code = "contract_bad_enum"          // a value outside the field's enum
	CodeSecret          Code = "contract_secret"            // the secret scanner found a secret in a string
	CodeSecretScanError Code = "contract_secret_scan_failed"
	CodeDuplicateID     Code = "contract_duplicate_id"        // an id used twice within the contract
	CodeOutOfRange      Code = "contract_number_out_of_range" // a whole number outside its field's bounds
)

// Research codes.
const (
	CodeResearchProvenanceUnbound Code = "research_provenance_unbound"       // a reference that is no pack reference id
	CodeResearchProvenanceMissing Code = "research_provenance_missing"       // established evidence without any reference
	CodeResearchUnknownUnasked    Code = "research_required_unknown_unasked" // a required unknown no clarification question covers
	CodeResearchQuestionUnbound   Code = "research_question_unknown_unbound" // a question naming an unknown that does not exist
	CodeResearchQuestionUnlinked  Code = "research_question_unlinked"        // a question linked to no unknown
)

// Specification codes.
const (
	CodeSpecReferenceUnbound Code = "spec_reference_unbound" // an input reference that is no pack reference id
	CodeSpecNoReferences     Code = "spec_input_references_missing"
	CodeSpecNoSections       Code = "spec_sections_missing"
	CodeSpecNoAcceptance     Code = "spec_acceptance_missing" // no item of kind "acceptance"
)

// Ticket Planning codes.
const (
	CodePlanNoTickets         Code = "plan_tickets_missing"
	CodePlanSpecItemUnbound   Code = "plan_spec_item_unbound"   // a specItemId that is no item of the approved spec
	CodePlanSpecItemsMissing  Code = "plan_spec_items_missing"  // a ticket implementing no spec item
	CodePlanSpecItemUncovered Code = "plan_spec_item_uncovered" // a spec item no ticket implements
	CodePlanDependencyUnknown Code = "plan_dependency_unknown"  // dependsOn names no ticket of the plan
	CodePlanDependencyCycle   Code = "plan_dependency_cycle"    // the dependencies form a cycle (a self-dependency included)
)

// Ticket Review codes.
const (
	CodeReviewCandidateMismatch = Code("review_candidate_digest_mismatch") // candidateDigest is not the frozen candidate's
	CodeReviewFindingPath       = Code("review_finding_path_invalid")      // a path that is not clean and relative
	CodeReviewLineWithoutPath   = Code("review_finding_line_without_path") // a line with no path
	CodeReviewConclusion        = Code("review_conclusion_inconsistent")   // accept with blocking findings, or request-changes without
)

// Ticket candidate codes: the first two from validation, the rest from rein's own checks
// (returned by the engine's [Freezer], see [CandidateRefusal]).
const (
	CodeCandidateTicketMismatch      = Code("candidate_ticket_mismatch")      // ticketId is not the attempt's ticket
	CodeCandidateVerificationUnbound = Code("candidate_verification_unbound") // a verificationId that is no approved command
	CodeCandidateDiffEmpty           = Code("candidate_diff_empty")           // the worktree has no tracked change or new file
	CodeCandidateVerificationFailed  = Code("candidate_verification_failed")  // a verification command rein ran failed
	CodeCandidateOverBudget          = Code("candidate_over_budget")          // the attempt used more than its budget
	CodeCandidateSessionNotCurrent   = Code("candidate_session_not_current")  // the submitting session is not the ticket's current attempt
)

// Tool-level codes.
const (
	CodeSchemaRefused    Code = "contract_schema_refused"    // refused by the tool's JSON schema, though the contract's checks pass
	CodeAlreadySubmitted Code = "contract_already_submitted" // a second submission after one was accepted
)

// ErrRefused is wrapped by every *[Error].
var ErrRefused = errors.New("candidate contract refused")

// Problem is one reason a submission was refused.
type Problem struct {
	Code Code `json:"code"`
	// Path locates the offending value: "(root)", "tickets[2].dependsOn[0]".
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string { return fmt.Sprintf("%s: %s [%s]", p.Path, p.Message, p.Code) }

// maxProblems caps how many problems one refusal lists; the rest are counted.
const maxProblems = 64

// Error is a refused submission: every problem found, each with a stable code and a path.
// Its message is written for the model, so that it can correct and resubmit.
type Error struct {
	Kind     Kind
	Problems []Problem
	// Omitted counts problems found beyond the listed ones.
	Omitted int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s contract refused, %d problem(s); fix every one and submit again:\n", e.Kind, len(e.Problems)+e.Omitted)
	for _, p := range e.Problems {
		b.WriteString("  - ")
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "  ... and %d more\n", e.Omitted)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Unwrap returns [ErrRefused].
func (e *Error) Unwrap() error { return ErrRefused }

// Has reports whether a problem with code c was found.
func (e *Error) Has(c Code) bool {
	for _, p := range e.Problems {
		if p.Code == c {
			return true
		}
	}
	return false
}

// problems collects problems for one validation.
type problems struct {
	list    []Problem
	omitted int
}

func (ps *problems) add(c Code, path, format string, args ...any) {
	if len(ps.list) >= maxProblems {
		ps.omitted++
		return
	}
	if path == "" {
		path = "(root)"
	}
	ps.list = append(ps.list, Problem{Code: c, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) err(k Kind) error {
	if len(ps.list) == 0 && ps.omitted == 0 {
		return nil
	}
	return &Error{Kind: k, Problems: ps.list, Omitted: ps.omitted}
}
