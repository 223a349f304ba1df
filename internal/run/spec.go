package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/run/contract"
)

// Artifact ids of Clarification, Specification and the Spec Gate.
const (
	ArtClarification = "clarification"
	ArtSpec          = "spec"
	ArtSpecRejection = "spec-rejection"
	ArtTicketPlan    = "ticket-plan"
	ArtPlanRejection = "ticket-plan-rejection"
)

// Ledger record kinds of Clarification and the gates.
const (
	KindClarified    = "clarification.answered"
	KindGateDecision = "gate.decision"
)

// Gate decisions.
const (
	GateApproved = "approved"
	GateRejected = "rejected"
)

// Gate names.
const (
	GateSpec       = "spec"
	GateTicketPlan = "ticket-plan"
)

// BlockClarificationRequired: Clarification cannot pass while a required unknown of Research
// is unanswered. It is reported, never recorded: `rein run clarify` resolves it.
const BlockClarificationRequired = "run_clarification_required"

// ErrGateDigest: an approval named a digest other than the current artifact's.
var ErrGateDigest error = usageError("gate digest mismatch")

// Answer is one clarification answer.
type Answer struct {
	UnknownID string `json:"unknownId"`
	Required  bool   `json:"required"`
	Answer    string `json:"answer"`
}

// Clarification is the digest-bound content of the clarification artifact.
type Clarification struct {
	Research artifact.Digest `json:"research"` // digest of the research artifact answered
	Answers  []Answer        `json:"answers"`
}

type clarifiedBody struct {
	Artifact artifact.Reference `json:"artifact"`
}

// GateDecision is the body of a gate.decision record: an approval bound to the artifact's
// digest, or a rejection with its reason artifact.
type GateDecision struct {
	Gate     string              `json:"gate"`
	Decision string              `json:"decision"`
	Digest   artifact.Digest     `json:"digest"` // the artifact decided on
	Artifact artifact.Reference  `json:"artifact"`
	Reason   *artifact.Reference `json:"reason,omitempty"`
	By       string              `json:"by"`
	At       time.Time           `json:"at"`
}

func gateStage(gate string) string {
	if g, ok := gateOf(gate); ok {
		return g.model
	}
	return StageTicketPlanning
}

// accepted returns the artifact of the latest accepted attempt of stage.
func (r *Run) accepted(stage string) (*artifact.Reference, bool) {
	as := r.StageAttempts[stage]
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Outcome == "accepted" && as[i].Artifact != nil {
			return as[i].Artifact, true
		}
	}
	return nil, false
}

// readRef reads an artifact and checks its file digest against ref.
func (r *Run) readRef(ref artifact.Reference) ([]byte, error) {
	data, err := os.ReadFile(resolve(r.Project, ref.Path))
	if err != nil {
		return nil, err
	}
	if d := artifact.Sum(data); d != ref.FileDigest {
		return nil, fmt.Errorf("%s has file digest %s, the ledger recorded %s", ref.Path, d, ref.FileDigest)
	}
	return data, nil
}

// researchContract reads the accepted Research contract.
func (r *Run) researchContract(ref *artifact.Reference) (*contract.Research, error) {
	if ref == nil {
		var ok bool
		if ref, ok = r.accepted(StageResearch); !ok {
			return nil, fmt.Errorf("run %s has no accepted research", r.ID)
		}
	}
	data, err := r.readRef(*ref)
	if err != nil {
		return nil, err
	}
	var res contract.Research
	if err := decodeArtifact(data, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Path, err)
	}
	return &res, nil
}

func requiredUnknowns(res *contract.Research) []contract.Unknown {
	var out []contract.Unknown
	for _, u := range res.RemainingUnknowns {
		if u.Required {
			out = append(out, u)
		}
	}
	return out
}

// passClarification completes Clarification when no required unknown is open; otherwise it
// refuses with a blocker whose recovery is `rein run clarify`.
func (r *Run) passClarification(l *ledger.Ledger) error {
	res, err := r.researchContract(nil)
	if err != nil {
		return err
	}
	if ids := r.openRequired(res); len(ids) > 0 && r.Clarification == nil {
		return &BlockedError{RunID: r.ID, Blockers: []Blocker{{Code: BlockClarificationRequired, Stage: StageClarification,
			Detail:   fmt.Sprintf("required unknown(s) or evidence gap(s) %s are unanswered", strings.Join(ids, ", ")),
			Recovery: []string{"answer them: rein run clarify " + r.ID + " --answers FILE (YAML or JSON: unknown or gap id → answer)"}}}}
	}
	_, err = l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageClarification, Outcome: "nothing to clarify"}})
	return err
}

// ParseAnswers reads an answers file: a YAML (or JSON) mapping of unknown id → answer text.
func ParseAnswers(data []byte) (map[string]string, error) {
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: answers: %w", ErrUsage, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: answers: expected a mapping of unknown id → answer", ErrUsage)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%w: answers: the answer to %q must be a non-empty string", ErrUsage, k)
		}
		out[k] = s
	}
	return out, nil
}

// Clarify records answers to the research's unknowns and Preflight's required evidence gaps as
// the immutable clarification artifact and completes Clarification. Every key must name an
// unknown or a required gap; every required unknown and gap needs an answer.
func Clarify(env Env, id string, answers map[string]string) (artifact.Reference, error) {
	var ref artifact.Reference
	r, l, err := env.openRun(id)
	if err != nil {
		return ref, err
	}
	defer l.Close()
	if r.Aborted {
		return ref, fmt.Errorf("%w: run %s was aborted", ErrFinished, id)
	}
	if err := r.reconcileAndRecord(env, l); err != nil {
		return ref, err
	}
	if err := r.checkEvidence(env); err != nil {
		return ref, err
	}
	if b, err := r.staleBlocker(); err != nil {
		return ref, err
	} else if b != nil {
		return ref, &BlockedError{RunID: id, Blockers: []Blocker{*b}}
	}
	if r.Stage != StageClarification {
		return ref, fmt.Errorf("%w: run %s is at stage %s, not clarification", ErrNotRunnable, id, r.Stage)
	}
	resRef, _ := r.accepted(StageResearch)
	res, err := r.researchContract(resRef)
	if err != nil {
		return ref, err
	}
	known := map[string]contract.Unknown{}
	for _, u := range res.RemainingUnknowns {
		known[u.ID] = u
	}
	// Required evidence gaps that are not also unknowns of the research are answered too.
	var gapAnswers []string
	for _, g := range requiredGapIDs(r.Gaps) {
		if _, ok := known[g]; !ok {
			gapAnswers = append(gapAnswers, g)
			known[g] = contract.Unknown{ID: g, Required: true}
		}
	}
	var bad, missing []string
	for k := range answers {
		if _, ok := known[k]; !ok {
			bad = append(bad, k)
		}
	}
	c := Clarification{Research: resRef.Digest}
	for _, u := range res.RemainingUnknowns {
		a, ok := answers[u.ID]
		if !ok {
			if u.Required {
				missing = append(missing, u.ID)
			}
			continue
		}
		c.Answers = append(c.Answers, Answer{UnknownID: u.ID, Required: u.Required, Answer: a})
	}
	for _, g := range gapAnswers {
		if a, ok := answers[g]; ok {
			c.Answers = append(c.Answers, Answer{UnknownID: g, Required: true, Answer: a})
		} else {
			missing = append(missing, g)
		}
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		ids := make([]string, 0, len(known))
		for _, u := range res.RemainingUnknowns {
			ids = append(ids, u.ID)
		}
		return ref, fmt.Errorf("%w: answers name unknown id(s) %s; the research's unknowns and the required evidence gaps are %s",
			ErrUsage, strings.Join(bad, ", "), strings.Join(append(ids, gapAnswers...), ", "))
	}
	if len(missing) > 0 {
		return ref, fmt.Errorf("%w: required unknown(s) %s have no answer", ErrUsage, strings.Join(missing, ", "))
	}
	rel := RunsDir + "/" + id + "/" + r.clarificationFile()
	data := renderStageArtifact(id, ArtClarification, "Clarification", StageClarification, len(r.Relock.Dropped)+1, env.now(), c)
	if ref, err = artifact.NewReference(ArtClarification, rel, data); err != nil {
		return ref, fmt.Errorf("%w: clarification: %w", ErrUsage, err)
	}
	if err := writeImmutable(filepath.Join(r.Project, filepath.FromSlash(rel)), data); err != nil {
		return ref, err
	}
	env.crash("clarification")
	if _, err := l.Append(ledger.Entry{Kind: KindClarified, Body: clarifiedBody{Artifact: ref}}); err != nil {
		return ref, err
	}
	_, err = l.Append(ledger.Entry{Kind: KindStageCompleted, Body: stageBody{Stage: StageClarification, Attempt: 1, Outcome: "answered"}})
	return ref, err
}

// SpecSystem is the workflow role's system prompt for the Specification stage.
const SpecSystem = `You are the workflow role of a rein delivery run, in the Specification stage.
Your inputs are the pack in the request; read reads only its files. You change nothing. Write
the specification the requirement, the research and the clarification answers in the pack
support, and submit it with rein_stage_result: prose is no outcome.`

const specRules = `- Submit exactly one Specification contract with rein_stage_result; prose is no outcome.
- inputReferences names the reference ids of the pack above the specification is made from.
- Give every item a unique id; state at least one acceptance criterion.
- Follow the clarification answers; where a rejection reason is in the pack, address it.
- Never include secrets, credentials or tokens.
- If a submission is refused, correct it following the listed problems and submit again.`

func (r *Run) specStage() modelStage {
	return modelStage{stage: StageSpecification, title: "Specification", kind: contract.KindSpecification, art: ArtSpec,
		file:   attemptFile(ArtSpec),
		system: SpecSystem, pack: r.specPack, bound: packBound(StageSpecification),
		request: func(n int, pack []byte) string {
			return fmt.Sprintf("%s: stage specification, attempt %d.\n\n", RequestPrefix(r.ID), n) + gapsSection(r.Gaps) + "\n" +
				requestTail(pack, specRules)
		}}
}

// specPack is the Specification stage's pack: the requirement and its snapshot, the accepted
// research, the clarification answers (if any), the latest rejection reason of the Spec Gate
// (if the gate sent it back) and the locked guidance files.
func (r *Run) specPack() (artifact.Pack, error) {
	p := artifact.Pack{Name: "specification", Version: "1"}
	for _, id := range []string{ArtRequirement, ArtSnapshot} {
		ref, ok := r.ref(id)
		if !ok {
			return p, fmt.Errorf("the ledger names no %s artifact", id)
		}
		p.References = append(p.References, ref)
	}
	res, ok := r.accepted(StageResearch)
	if !ok {
		return p, fmt.Errorf("run %s has no accepted research", r.ID)
	}
	p.References = append(p.References, *res)
	if r.Clarification != nil {
		p.References = append(p.References, *r.Clarification)
	}
	if reason := r.rejection(GateSpec); reason != nil {
		p.References = append(p.References, *reason)
	}
	return r.withGuidance(p)
}

// rejection returns the reason artifact of gate's latest decision when it sent its stage back.
func (r *Run) rejection(gate string) *artifact.Reference {
	if gs := r.Gates[gate]; len(gs) > 0 && gs[len(gs)-1].Decision == GateRejected {
		return gs[len(gs)-1].Reason
	}
	return nil
}

// withGuidance appends the locked guidance files to p.
func (r *Run) withGuidance(p artifact.Pack) (artifact.Pack, error) {
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
