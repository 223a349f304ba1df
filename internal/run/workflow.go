package run

import (
	"encoding/json"

	"github.com/reinhq/rein/internal/artifact"
)

// Stage kinds.
const (
	KindCheck    = "check"    // deterministic code, no model
	KindModel    = "model"    // a fresh model session of the stage's role, ending in a closed contract
	KindHuman    = "human"    // a person supplies an input artifact (answers, integration)
	KindGate     = "gate"     // a person approves an artifact bound to its digest
	KindTerminal = "terminal" // the run's end state
)

// Stage ids of the delivery workflow.
const (
	StagePreflight      = "preflight"
	StageResearch       = "research"
	StageClarification  = "clarification"
	StageSpecification  = "specification"
	StageSpecGate       = "spec-gate"
	StageTicketPlanning = "ticket-planning"
	StageTicketPlanGate = "ticket-plan-gate"
	StageDeliveryReady  = "delivery-ready"
)

// Workflow is the delivery workflow as versioned data; its digest is part of the execution lock.
type Workflow struct {
	ID      string          `json:"id"`
	Version int             `json:"version"`
	Stages  []WorkflowStage `json:"stages"`
}

// WorkflowStage is one stage: its kind, the role whose session runs it (model stages), the
// gate it is (gates), and whether it runs once per ticket.
type WorkflowStage struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Role      string `json:"role,omitempty"`
	Gate      string `json:"gate,omitempty"`
	PerTicket bool   `json:"perTicket,omitempty"`
}

// DeliveryWorkflow returns the workflow of the delivery-run design (README, Delivery runs), version 1: every stage in order.
func DeliveryWorkflow() Workflow {
	return Workflow{ID: "delivery", Version: 1, Stages: []WorkflowStage{
		{ID: StagePreflight, Name: "Preflight", Kind: KindCheck},
		{ID: StageResearch, Name: "Research", Kind: KindModel, Role: RoleWorkflow},
		{ID: StageClarification, Name: "Clarification", Kind: KindHuman, Role: RoleWorkflow},
		{ID: StageSpecification, Name: "Specification", Kind: KindModel, Role: RoleWorkflow},
		{ID: StageSpecGate, Name: "Spec Gate", Kind: KindGate, Gate: "spec"},
		{ID: StageTicketPlanning, Name: "Ticket Planning", Kind: KindModel, Role: RoleWorkflow},
		{ID: StageTicketPlanGate, Name: "Ticket Plan Gate", Kind: KindGate, Gate: "ticket-plan"},
		{ID: "ticket-execution", Name: "Ticket Execution", Kind: KindModel, Role: RoleWriter, PerTicket: true},
		{ID: "ticket-review", Name: "Ticket Review", Kind: KindModel, Role: RoleReview, PerTicket: true},
		{ID: "ticket-verification", Name: "Ticket Verification", Kind: KindCheck, PerTicket: true},
		{ID: "ticket-acceptance", Name: "Ticket Acceptance", Kind: KindCheck, PerTicket: true},
		{ID: "manual-integration", Name: "Manual Integration", Kind: KindHuman},
		{ID: "reconciliation", Name: "Reconciliation", Kind: KindCheck},
		{ID: "final-checklist", Name: "Final Checklist", Kind: KindCheck},
		{ID: "full-run-verification", Name: "Full Run Verification", Kind: KindCheck},
		{ID: "run-acceptance", Name: "Run Acceptance", Kind: KindGate, Gate: "run"},
		{ID: StageDeliveryReady, Name: "Delivery Ready", Kind: KindTerminal},
	}}
}

// Digest is the sha256 of the workflow's JSON encoding (fields in declaration order, stages in
// order).
func (w Workflow) Digest() artifact.Digest {
	data, err := json.Marshal(w)
	if err != nil {
		panic(err) // plain strings, ints and bools: cannot fail
	}
	return artifact.Sum(data)
}

// Next returns the stage after id, or "" at the end.
func (w Workflow) Next(id string) string {
	for i, s := range w.Stages {
		if s.ID == id && i+1 < len(w.Stages) {
			return w.Stages[i+1].ID
		}
	}
	return ""
}
