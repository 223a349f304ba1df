package run

import (
	"fmt"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/run/contract"
)

// PlanSystem is the workflow role's system prompt for the Ticket Planning stage.
const PlanSystem = `You are the workflow role of a rein delivery run, in the Ticket Planning stage.
Your inputs are the pack in the request; read reads only its files. You change nothing. Split
the approved specification in the pack into tickets a writer can implement one at a time, and
submit them with rein_stage_result: prose is no outcome.`

const planRulesText = `- Submit exactly one Ticket Planning contract with rein_stage_result; prose is no outcome.
- Every item id of the approved specification is implemented by at least one ticket; name only
  item ids of that specification (listed above).
- Give every ticket a unique id; dependsOn names only tickets of this plan, without cycles.
- Where a rejection reason is in the pack, address it.
- Never include secrets, credentials or tokens.
- If a submission is refused, correct it following the listed problems and submit again.`

// approvedSpec returns the specification the Spec Gate approved, refusing when the approval
// no longer holds.
func (r *Run) approvedSpec() (artifact.Reference, *contract.Specification, error) {
	ds := r.Gates[GateSpec]
	if len(ds) == 0 || ds[len(ds)-1].Decision != GateApproved {
		return artifact.Reference{}, nil, fmt.Errorf("run %s has no approved specification", r.ID)
	}
	ref := ds[len(ds)-1].Artifact
	data, err := r.readRef(ref)
	if err != nil {
		return ref, nil, fmt.Errorf("the approved specification is stale: %w", err)
	}
	if d, err := artifact.NewReference(ref.ID, ref.Path, data); err != nil || d.Digest != ds[len(ds)-1].Digest {
		return ref, nil, fmt.Errorf("the approved specification %s is stale: its digest is not the approved %s", ref.Path, ds[len(ds)-1].Digest)
	}
	var spec contract.Specification
	if err := decodeArtifact(data, &spec); err != nil {
		return ref, nil, fmt.Errorf("%s: %w", ref.Path, err)
	}
	return ref, &spec, nil
}

func (r *Run) planStage() modelStage {
	var items []string
	return modelStage{stage: StageTicketPlanning, title: "Ticket Planning", kind: contract.KindTicketPlanning, art: ArtTicketPlan,
		file: attemptFile(ArtTicketPlan), system: PlanSystem, bound: packBound(StageTicketPlanning),
		pack: func() (artifact.Pack, error) {
			p := artifact.Pack{Name: "ticket-planning", Version: "1"}
			for _, id := range []string{ArtRequirement, ArtSnapshot} {
				ref, ok := r.ref(id)
				if !ok {
					return p, fmt.Errorf("the ledger names no %s artifact", id)
				}
				p.References = append(p.References, ref)
			}
			spec, sc, err := r.approvedSpec()
			if err != nil {
				return p, err
			}
			items = sc.ItemIDs()
			p.References = append(p.References, spec)
			if reason := r.rejection(GateTicketPlan); reason != nil {
				p.References = append(p.References, *reason)
			}
			return r.withGuidance(p)
		},
		refs: func(p artifact.Pack) contract.Refs { return contract.PackRefs(p).WithSpecItems(items...) },
		request: func(n int, pack []byte) string {
			return fmt.Sprintf("%s: stage ticket-planning, attempt %d.\n\n", RequestPrefix(r.ID), n) + gapsSection(r.Gaps) +
				fmt.Sprintf("\n## Specification items\n\n%v\n\n", items) + requestTail(pack, planRulesText)
		}}
}
