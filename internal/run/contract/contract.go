package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazy"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/jsonschema"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/strictjson"
	"github.com/reinhq/rein/internal/tool"
)

// Kind names a stage contract.
type Kind string

// The contracts of this package.
const (
	KindResearch       Kind = "research"
	KindSpecification  Kind = "specification"
	KindTicketPlanning Kind = "ticket-planning"
	// KindTicketReview is the review of a frozen candidate (rein_ticket_review).
	KindTicketReview Kind = "ticket-review"
	// KindTicketCandidate is a writer's candidate submission (rein_ticket_candidate).
	KindTicketCandidate Kind = "ticket-candidate"
)

// Kinds lists every contract kind.
var Kinds = []Kind{KindResearch, KindSpecification, KindTicketPlanning, KindTicketReview, KindTicketCandidate}

// MaxDocumentBytes is the byte cap of every contract document.
const MaxDocumentBytes = 256 << 10

// Refs is what a submission may refer to: the ids of the stage's pack references and, for
// Ticket Planning, the item ids of the approved specification. The zero value binds nothing.
type Refs struct {
	pack      map[string]bool
	specItems map[string]bool
	itemOrder []string
	ticket    ticketRefs
}

// NewRefs returns Refs binding the given pack reference ids.
func NewRefs(ids ...string) Refs {
	r := Refs{pack: make(map[string]bool, len(ids))}
	for _, id := range ids {
		r.pack[id] = true
	}
	return r
}

// PackRefs returns Refs binding the ids of p's references.
func PackRefs(p artifact.Pack) Refs {
	ids := make([]string, len(p.References))
	for i, ref := range p.References {
		ids[i] = ref.ID
	}
	return NewRefs(ids...)
}

// WithSpecItems returns a copy of r that also binds the given specification item ids (see
// [Specification.ItemIDs]); Ticket Planning requires every one of them to be implemented by
// some ticket.
func (r Refs) WithSpecItems(ids ...string) Refs {
	out := Refs{pack: r.pack, specItems: make(map[string]bool, len(ids)), itemOrder: slices.Clone(ids), ticket: r.ticket}
	for _, id := range ids {
		out.specItems[id] = true
	}
	return out
}

// HasPack reports whether id is a pack reference id.
func (r Refs) HasPack(id string) bool { return r.pack[id] }

// Accepted is a submission that passed every check.
type Accepted struct {
	Kind Kind
	// Exactly one of these is set, by Kind.
	Research        *Research
	Specification   *Specification
	TicketPlan      *TicketPlan
	TicketReview    *TicketReview
	TicketCandidate *TicketCandidate
	// JSON is the contract re-encoded canonically (struct order, no insignificant space);
	// Digest is "sha256:" and the hex sha256 of JSON.
	JSON   []byte
	Digest string
}

// Contract is one stage's closed candidate contract: its schema and its validation.
type Contract struct {
	kind Kind
	typ  reflect.Type
	// schema builds the JSON Schema by reflection on first use, not at package load: most
	// rein processes never run a delivery stage.
	schema func() json.RawMessage
	rules  func(v any, refs Refs, ps *problems)
}

// contracts are the contracts by kind, made on first use (not at package load: most rein
// processes never run a delivery stage).
var contracts lazy.Value[map[Kind]*Contract]

// contractOf returns the contract of kind k.
func contractOf(k Kind) (*Contract, bool) {
	c, ok := contracts.Get(makeContracts)[k]
	return c, ok
}

func makeContracts() map[Kind]*Contract {
	return map[Kind]*Contract{
		KindResearch:       newContract[Research](KindResearch, func(v any, r Refs, ps *problems) { researchRules(v.(*Research), r, ps) }),
		KindSpecification:  newContract[Specification](KindSpecification, func(v any, r Refs, ps *problems) { specRules(v.(*Specification), r, ps) }),
		KindTicketPlanning: newContract[TicketPlan](KindTicketPlanning, func(v any, r Refs, ps *problems) { planRules(v.(*TicketPlan), r, ps) }),
		KindTicketReview:   newContract[TicketReview](KindTicketReview, func(v any, r Refs, ps *problems) { reviewRules(v.(*TicketReview), r, ps) }),
		KindTicketCandidate: newContract[TicketCandidate](KindTicketCandidate, func(v any, r Refs, ps *problems) {
			candidateRules(v.(*TicketCandidate), r, ps)
		}),
	}
}

func newContract[T any](k Kind, rules func(any, Refs, *problems)) *Contract {
	t := reflect.TypeFor[T]()
	return &Contract{
		kind: k,
		typ:  t,
		schema: sync.OnceValue(func() json.RawMessage {
			return tool.MustSchemaFor[T](func(s *jsonschema.Schema) { limitSchema(s, t) })
		}),
		rules: rules,
	}
}

// mustContract is the contract of a kind this package defines.
func mustContract(k Kind) *Contract {
	c, _ := contractOf(k)
	return c
}

// For returns the contract of kind k.
func For(k Kind) (*Contract, error) {
	c, ok := contractOf(k)
	if !ok {
		return nil, fmt.Errorf("contract: unknown kind %q", k)
	}
	return c, nil
}

// Kind returns the contract's kind.
func (c *Contract) Kind() Kind { return c.kind }

// Schema returns the contract's JSON Schema (every object closed, lists capped).
func (c *Contract) Schema() json.RawMessage { return slices.Clone(c.schema()) }

// MaxBytes returns the document's byte cap.
func (c *Contract) MaxBytes() int { return MaxDocumentBytes }

// Validate checks raw against the contract, binding references to refs. A refusal is an
// *[Error] listing every problem found (at most 64, the rest counted).
func (c *Contract) Validate(raw []byte, refs Refs) (*Accepted, error) {
	var ps problems
	if len(raw) > MaxDocumentBytes {
		ps.add(CodeTooLarge, "", "%d bytes, at most %d are accepted; shorten the contract", len(raw), MaxDocumentBytes)
		return nil, ps.err(c.kind)
	}
	tree, err := strictjson.Decode(string(raw))
	if err != nil {
		ps.add(CodeMalformed, "", "%v", err)
		return nil, ps.err(c.kind)
	}
	(&checker{ps: &ps}).value("", tree, c.typ, field{limit: DefaultStringBytes})
	if err := ps.err(c.kind); err != nil {
		return nil, err
	}
	v := reflect.New(c.typ)
	if err := strictjson.Unmarshal(raw, v.Interface()); err != nil {
		// The checker accepted the document, so this is a bug; refuse all the same.
		ps.add(CodeMalformed, "", "%v", err)
		return nil, ps.err(c.kind)
	}
	c.rules(v.Interface(), refs, &ps)
	if err := ps.err(c.kind); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v.Interface()); err != nil {
		return nil, fmt.Errorf("contract: encode accepted %s: %w", c.kind, err)
	}
	canon := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(canon)
	a := &Accepted{Kind: c.kind, JSON: canon, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	switch x := v.Interface().(type) {
	case *Research:
		a.Research = x
	case *Specification:
		a.Specification = x
	case *TicketPlan:
		a.TicketPlan = x
	case *TicketReview:
		a.TicketReview = x
	case *TicketCandidate:
		a.TicketCandidate = x
	}
	return a, nil
}

// IsRefusal reports whether err is a refused submission and returns it.
func IsRefusal(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ids records ids within one contract and reports duplicates.
type ids map[string]string

func (s ids) add(ps *problems, path, id string) {
	if first, dup := s[id]; dup {
		ps.add(CodeDuplicateID, path, "id %q is already used at %s", id, first)
		return
	}
	s[id] = path
}

func researchRules(r *Research, refs Refs, ps *problems) {
	seen := ids{}
	for i, e := range r.EstablishedEvidence {
		p := fmt.Sprintf("establishedEvidence[%d]", i)
		seen.add(ps, p+".id", e.ID)
		if len(e.References) == 0 {
			ps.add(CodeResearchProvenanceMissing, p+".references", "established evidence needs at least one pack reference id")
		}
		for j, ref := range e.References {
			if !refs.HasPack(ref) {
				ps.add(CodeResearchProvenanceUnbound, fmt.Sprintf("%s.references[%d]", p, j), "%q is not a reference id of this stage's pack; cite only pack references", ref)
			}
		}
	}
	unknowns := map[string]bool{}
	for i, u := range r.RemainingUnknowns {
		p := fmt.Sprintf("remainingUnknowns[%d]", i)
		seen.add(ps, p+".id", u.ID)
		unknowns[u.ID] = true
		for j, ref := range u.References {
			if !refs.HasPack(ref) {
				ps.add(CodeResearchProvenanceUnbound, fmt.Sprintf("%s.references[%d]", p, j), "%q is not a reference id of this stage's pack; cite only pack references", ref)
			}
		}
	}
	for i, u := range r.RequiredEvidenceUnavailable {
		seen.add(ps, fmt.Sprintf("requiredEvidenceUnavailable[%d].id", i), u.ID)
	}
	asked := map[string]bool{}
	for i, q := range r.ClarificationQuestions {
		p := fmt.Sprintf("clarificationQuestions[%d]", i)
		seen.add(ps, p+".id", q.ID)
		if len(q.UnknownIDs) == 0 {
			ps.add(CodeResearchQuestionUnlinked, p+".unknownIds", "name at least one remainingUnknowns id this question resolves")
		}
		for j, id := range q.UnknownIDs {
			if !unknowns[id] {
				ps.add(CodeResearchQuestionUnbound, fmt.Sprintf("%s.unknownIds[%d]", p, j), "%q is no id of remainingUnknowns", id)
			}
			asked[id] = true
		}
	}
	for i, u := range r.RemainingUnknowns {
		if u.Required && !asked[u.ID] {
			ps.add(CodeResearchUnknownUnasked, fmt.Sprintf("remainingUnknowns[%d]", i), "unknown %q is required but no clarification question names it", u.ID)
		}
	}
}

func specRules(s *Specification, refs Refs, ps *problems) {
	if len(s.InputReferences) == 0 {
		ps.add(CodeSpecNoReferences, "inputReferences", "name at least one pack reference id the specification is made from")
	}
	for i, ref := range s.InputReferences {
		if !refs.HasPack(ref) {
			ps.add(CodeSpecReferenceUnbound, fmt.Sprintf("inputReferences[%d]", i), "%q is not a reference id of this stage's pack; cite only pack references", ref)
		}
	}
	if len(s.Sections) == 0 {
		ps.add(CodeSpecNoSections, "sections", "a specification needs at least one section")
	}
	seen := ids{}
	acceptance := false
	for i, sec := range s.Sections {
		p := fmt.Sprintf("sections[%d]", i)
		seen.add(ps, p+".id", sec.ID)
		for j, it := range sec.Items {
			seen.add(ps, fmt.Sprintf("%s.items[%d].id", p, j), it.ID)
			acceptance = acceptance || it.Kind == ItemAcceptance
		}
	}
	if len(s.Sections) > 0 && !acceptance {
		ps.add(CodeSpecNoAcceptance, "sections", "no item of kind %q: state at least one acceptance criterion", ItemAcceptance)
	}
}

func planRules(pl *TicketPlan, refs Refs, ps *problems) {
	if len(pl.Tickets) == 0 {
		ps.add(CodePlanNoTickets, "tickets", "a plan needs at least one ticket")
		return
	}
	seen := ids{}
	index := map[string]int{}
	covered := map[string]bool{}
	for i, t := range pl.Tickets {
		p := fmt.Sprintf("tickets[%d]", i)
		seen.add(ps, p+".id", t.ID)
		if _, dup := index[t.ID]; !dup {
			index[t.ID] = i
		}
		if len(t.SpecItemIDs) == 0 {
			ps.add(CodePlanSpecItemsMissing, p+".specItemIds", "name at least one item id of the approved specification")
		}
		for j, id := range t.SpecItemIDs {
			if !refs.specItems[id] {
				ps.add(CodePlanSpecItemUnbound, fmt.Sprintf("%s.specItemIds[%d]", p, j), "%q is no item id of the approved specification", id)
			}
			covered[id] = true
		}
	}
	for _, id := range refs.itemOrder {
		if !covered[id] {
			ps.add(CodePlanSpecItemUncovered, "tickets", "specification item %q is implemented by no ticket", id)
		}
	}
	for i, t := range pl.Tickets {
		for j, d := range t.DependsOn {
			if _, ok := index[d]; !ok {
				ps.add(CodePlanDependencyUnknown, fmt.Sprintf("tickets[%d].dependsOn[%d]", i, j), "%q is no ticket id of this plan", d)
			}
		}
	}
	if cyc := findCycle(pl.Tickets, index); cyc != nil {
		ps.add(CodePlanDependencyCycle, fmt.Sprintf("tickets[%d].dependsOn", index[cyc[0]]), "dependency cycle %s; tickets must form an acyclic graph", strings.Join(cyc, " → "))
	}
}

// findCycle returns one dependency cycle (first id repeated at the end), or nil. Unknown
// dependencies are ignored (reported separately).
func findCycle(ts []Ticket, index map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(ts))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = grey
		stack = append(stack, ts[i].ID)
		for _, d := range ts[i].DependsOn {
			j, ok := index[d]
			if !ok {
				continue
			}
			switch color[j] {
			case grey:
				start := slices.Index(stack, d)
				return append(slices.Clone(stack[start:]), d)
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return nil
	}
	for i := range ts {
		if color[i] == white {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}
