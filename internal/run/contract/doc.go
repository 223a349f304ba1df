// Package contract holds the closed candidate contracts of the delivery run's stages
// (README, Delivery runs: "Closed candidate contracts") and the tools through which a session's model
// submits one: rein_stage_result (workflow stages), rein_ticket_review (Ticket Review) and
// rein_ticket_candidate (a writer's candidate). A stage, review or writer attempt has an
// outcome only through its tool: an answer in prose is no outcome.
//
// # Shapes
//
// Every key is required unless marked optional, every list holds at most [MaxItems] (64)
// items, every string has a byte cap (in brackets; 4096 when not given) and must not be blank
// (a section body may be empty). The whole document is at most [MaxDocumentBytes] (256 KiB).
//
//	Research        {stage: "research",
//	                 establishedEvidence: [{id[128], statement, references: [packRefId[256]]}],
//	                 remainingUnknowns: [{id[128], description, required: bool,
//	                                      references?: [packRefId[256]]}],
//	                 requiredEvidenceUnavailable: [{id[128], description}],
//	                 clarificationQuestions: [{id[128], question, unknownIds: [unknownId[128]]}]}
//	Specification   {title[512],
//	                 sections: [{id[128], title[512], body[16384],
//	                             items: [{id[128], kind: requirement|acceptance|constraint, statement}]}],
//	                 inputReferences: [packRefId[256]]}
//	TicketPlan      {tickets: [{id[128], title[512], specItemIds: [specItemId[128]],
//	                            dependsOn: [ticketId[128]]}]}
//	TicketReview    {candidateDigest[128], blockingFindings: [finding], advisoryFindings: [finding],
//	                 conclusion: accept|request-changes}
//	    finding     {id[128], path?[1024], line?: 1…10000000, statement}
//	TicketCandidate {ticketId[128], summary, verificationIds?: [commandId[128]]}
//
// A finding's severity is the list holding it (blocking findings keep the ticket from
// acceptance); a second severity field would let the two disagree. A ticket candidate claims
// nothing rein checks itself (the diff, the verification results, the budget): those are
// established by the engine when the tool is called.
//
// # Validation
//
// [Contract.Validate] is code, not a prompt, and lists every problem it finds (up to 64, the
// rest counted) as an *[Error] of [Problem]s, each with a stable [Code] and a path
// ("tickets[2].dependsOn[0]"), so that the model can correct its submission. In order:
//
//   - form: the byte cap ([CodeTooLarge]); one JSON object, valid UTF-8, no duplicate key, no
//     trailing data ([CodeMalformed]); exact keys ([CodeUnknownKey], [CodeKeyCase]), required
//     keys ([CodeMissingField]), JSON types with null refused ([CodeWrongType]), list lengths
//     ([CodeTooManyItems]), string caps ([CodeStringTooLarge]), blank strings
//     ([CodeEmptyString]), enums ([CodeBadEnum]);
//   - a secret scan (policy.Scan) of every string and every unknown key: a finding
//     ([CodeSecret]) or a scanner error ([CodeSecretScanError]) refuses; the secret is never
//     repeated in the refusal;
//   - bindings and cross-field rules, only once the form is right: ids unique within the
//     contract ([CodeDuplicateID]); Research: each established fact cites at least one
//     reference ([CodeResearchProvenanceMissing]) and every reference is an id of the stage's
//     pack ([CodeResearchProvenanceUnbound]), each question names existing unknowns
//     ([CodeResearchQuestionUnlinked], [CodeResearchQuestionUnbound]) and every required
//     unknown is asked ([CodeResearchUnknownUnasked]); Specification: at least one input
//     reference, all bound ([CodeSpecNoReferences], [CodeSpecReferenceUnbound]), at least one
//     section ([CodeSpecNoSections]) and one acceptance criterion ([CodeSpecNoAcceptance]);
//     Ticket Planning: at least one ticket ([CodePlanNoTickets]), each implementing at least
//     one item of the approved specification ([CodePlanSpecItemsMissing],
//     [CodePlanSpecItemUnbound]), every spec item implemented by some ticket
//     ([CodePlanSpecItemUncovered]), dependencies naming tickets of the plan
//     ([CodePlanDependencyUnknown]) and forming no cycle ([CodePlanDependencyCycle]);
//     Ticket Review: candidateDigest is the digest of the frozen candidate under review
//     ([CodeReviewCandidateMismatch]), finding ids unique across both lists, a path clean and
//     relative ([CodeReviewFindingPath]), a line only with a path ([CodeReviewLineWithoutPath]),
//     the conclusion accept exactly when there is no blocking finding ([CodeReviewConclusion]);
//     ticket candidate: ticketId is the attempt's ticket ([CodeCandidateTicketMismatch]) and
//     every verificationId an approved command ([CodeCandidateVerificationUnbound]).
//
// Whole numbers (a finding's line) must be integers within their field's bounds
// ([CodeWrongType], [CodeOutOfRange]).
//
// What a submission may cite is given as [Refs]: the ids of the stage's pack references
// ([PackRefs]) and, for Ticket Planning, the approved specification's item ids
// ([Refs.WithSpecItems], [Specification.ItemIDs]); for Ticket Review the frozen candidate's
// digest ([Refs.WithCandidate]); for a ticket candidate the attempt's ticket id and the
// approved verification command ids ([Refs.WithTicket]). An accepted submission ([Accepted]) carries
// the decoded contract, its canonical JSON and that JSON's sha256 digest.
//
// The JSON Schema of each contract ([Contract.Schema], made by tool.SchemaFor) closes every
// object and carries maxItems, maxLength (characters; the byte caps are checked by code) and
// enums (an enum string carries no maxLength: the enum bounds it); it is what the model sees. The code checks above do not rely on it.
//
// # The tool
//
// [StageResult] is the rein_stage_result tool of one stage attempt, built with the stage's
// contract, its Refs and a [Sink] that stores an accepted contract. Calls are serialised. The
// first submission that passes validation and is stored is the attempt's outcome; every later
// call is refused ([CodeAlreadySubmitted]). A call the kernel refuses against the tool's schema before Run
// reaches [StageResult.ArgsRefused] (tool.RefusalObserver) and counts as a refused submission with
// the contract's own codes ([CodeSchemaRefused] when only the schema refuses it). A refusal is an error result whose Details is the
// *[Error]; a sink failure is an error and leaves the attempt open for a resubmission. When the
// session has ended, [StageResult.Outcome] settles the attempt: the accepted contract, or an
// *[AttemptError] with [ReasonContractMissing] (the model never called the tool, e.g. it
// answered in prose) or [ReasonContractRefused] (every submission was refused). The run
// engine retries such an attempt in a fresh session within budget, then blocks.
//
// [ReviewTool] is rein_ticket_review: a StageResult for the Ticket Review contract (refs
// must bind the candidate digest). The engine re-reads the candidate before and after the
// review session; a review of a candidate that changed is void
// (ticket_review_candidate_stale), whatever it says.
//
// [CandidateTool] is rein_ticket_candidate of one writer attempt (refs must bind the ticket).
// It validates each call, then hands the submission to the engine's [Freezer], which checks
// what only rein can establish — the session is the ticket's current attempt, the worktree
// holds a non-empty tracked diff, every required verification command passes when rein runs
// it, the attempt is within budget — and freezes the candidate (commit, candidate artifact,
// candidate digest). A failed check is an *[Error] made with [CandidateRefusal]
// ([CodeCandidateSessionNotCurrent], [CodeCandidateDiffEmpty],
// [CodeCandidateVerificationFailed], [CodeCandidateOverBudget]) that the model sees and may
// act on; any other freezer error leaves the attempt open. Calls are serialised, so the
// engine never freezes twice at once; the first frozen candidate is the outcome and later
// calls are refused ([CodeAlreadySubmitted]). [CandidateTool.Outcome] settles the attempt
// like [StageResult.Outcome].
//
// This package does not import internal/run: the run engine builds Refs from the stage's pack
// and stores what the sink receives.
package contract
