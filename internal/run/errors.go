package run

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. The CLI maps ErrInvalidProfile, ErrNoProfile and ErrNoRun to the usage exit
// code, ErrNotApproved and ErrBlocked to the blocked one.
var (
	// ErrInvalidProfile: .rein/profile.yaml does not parse or validate (see *ProfileError).
	ErrInvalidProfile = errors.New("invalid project profile")
	// ErrNoProfile: the project has no .rein/profile.yaml.
	ErrNoProfile = errors.New("no project profile")
	// ErrNotApproved: the profile has no valid approval (none, or the profile changed since).
	ErrNotApproved = errors.New("project profile not approved")
	// ErrBlocked: the run is stopped by one or more blockers (see *BlockedError).
	ErrBlocked = errors.New("run blocked")
	// ErrNoRun: no such run (or no run of this project).
	ErrNoRun = errors.New("no such run")
	// ErrFinished: the run was aborted or has finished; nothing more can be done with it.
	ErrFinished = errors.New("run finished")
)

// Blocker codes. A blocker stops the run until a person acts on one of its recovery options.
const (
	BlockHarnessDrift     = "run_harness_package_drift"
	BlockProfileDrift     = "run_profile_drift"
	BlockSkillDrift       = "run_skill_drift"
	BlockRequirementDrift = "run_requirement_drift"
	BlockModelPolicyDrift = "run_model_policy_drift"
	BlockWorkflowDrift    = "run_workflow_drift"
	BlockGuidanceDrift    = "run_guidance_drift"
	BlockLockTampered     = "run_lock_tampered"
	BlockPreflight        = "run_preflight_failed"
)

// Blocker is one reason the run cannot continue, with what a person can do about it. Detail
// names paths, ids and digests only, never requirement text.
type Blocker struct {
	Code  string `json:"code"`
	Stage string `json:"stage"`
	// Input names the locked input a drift blocker is about (guidance:PATH, skill:NAME,
	// profile, models.ROLE, workflow, requirement, lock, harness); "" for other blockers.
	Input string `json:"input,omitempty"`
	// Ticket names the ticket a blocker was recorded for (its lease, attempts, review,
	// verification, start); "" for a run-level blocker.
	Ticket   string   `json:"ticket,omitempty"`
	Detail   string   `json:"detail"`
	Recovery []string `json:"recovery"`
	// legacy: read from a run.blocked record written before blockers named their ticket
	// (blockedBody.Schema 0), whose ticket, if any, only its Detail names.
	legacy bool
}

// BlockedError lists the blockers that stopped a run. errors.Is(err, ErrBlocked).
type BlockedError struct {
	RunID    string
	Blockers []Blocker
}

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s is blocked:", e.RunID)
	for _, bl := range e.Blockers {
		fmt.Fprintf(&b, "\n  %s: %s", bl.Code, bl.Detail)
		for _, r := range bl.Recovery {
			fmt.Fprintf(&b, "\n    recovery: %s", r)
		}
	}
	return b.String()
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }
