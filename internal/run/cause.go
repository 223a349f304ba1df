package run

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/run/contract"
)

// Failure causes of a stage attempt (an [Attempt]'s Cause.Code). Stable: the run ledger, status
// and metrics carry them.
const (
	// CauseProviderUnavailable: a model call failed after its retries (Cause.ErrorKind says
	// how: server, overloaded, rate_limit, network, timeout, auth, …; Cause.HTTPStatus the
	// status when there was one). It does not count against the stage's attempts.
	CauseProviderUnavailable = "provider_unavailable"
	// CauseBudgetExhausted: the role's budget stopped the attempt (Cause.Budget names which).
	CauseBudgetExhausted = "budget_exhausted"
	// CauseContractMissing: the session ended without a submission through rein_stage_result.
	CauseContractMissing = "contract_missing"
	// CauseContractInvalid: every submission was refused (Cause.Problems counts their codes).
	CauseContractInvalid = "contract_invalid"
	// CauseInterrupted: the process running the attempt died; resume settled it by evidence.
	CauseInterrupted = "interrupted"
)

// Cause is why a stage attempt failed: one of the Cause* codes and its particulars — kinds,
// statuses and codes only, never a message from the provider or the model.
type Cause struct {
	Code       string `json:"code"`
	ErrorKind  string `json:"errorKind,omitempty"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Budget     string `json:"budget,omitempty"`
	// Problems counts the refused submissions' problems by code (contract.Code).
	Problems map[string]int `json:"problems,omitempty"`
}

// FailureCause is the cause of a failed attempt: its recorded Cause, or for an attempt recorded
// before causes were (only a reason) the cause its reason names. nil for an accepted attempt.
func (a Attempt) FailureCause() *Cause {
	if a.Outcome == "accepted" {
		return nil
	}
	if a.Cause != nil {
		return a.Cause
	}
	switch a.Reason {
	case string(contract.ReasonContractRefused):
		return &Cause{Code: CauseContractInvalid}
	case "":
		return &Cause{Code: CauseContractMissing}
	}
	return &Cause{Code: a.Reason}
}

// attemptCause types how an attempt that has no accepted contract ended: the session's error
// (a provider failure after retries, a budget) first, then the contract tool's verdict.
func attemptCause(sessionErr, outcomeErr error) *Cause {
	var me *kernel.ModelError
	if errors.As(sessionErr, &me) && me.Err != nil {
		return &Cause{Code: CauseProviderUnavailable, ErrorKind: string(me.Err.Kind), HTTPStatus: me.Err.Status}
	}
	if be := (*kernel.BudgetError)(nil); errors.As(sessionErr, &be) {
		return &Cause{Code: CauseBudgetExhausted, Budget: be.Budget}
	}
	var ae *contract.AttemptError
	if errors.As(outcomeErr, &ae) && ae.Reason == contract.ReasonContractRefused {
		c := &Cause{Code: CauseContractInvalid, Problems: map[string]int{}}
		for code, n := range ae.Problems {
			c.Problems[string(code)] = n
		}
		return c
	}
	return &Cause{Code: CauseContractMissing}
}

// providerFailure is the provider error of an attempt whose session failed on a model call
// (nil otherwise): the attempt is recorded, then the stage stops with it.
func providerFailure(sessionErr error) *llm.Error {
	var me *kernel.ModelError
	if errors.As(sessionErr, &me) && me.Err != nil && me.Err.Kind != llm.KindAborted {
		return me.Err
	}
	return nil
}

// countedAttempts is the number of attempts of stage after round (the attempt count when a
// gate last sent it back) that count against [MaxStageAttempts]: every settled one but those
// the provider failed.
func (r *Run) countedAttempts(stage string, round int) int {
	return len(slices.DeleteFunc(slices.Clone(r.StageAttempts[stage]), func(a Attempt) bool {
		c := a.FailureCause()
		return a.Attempt <= round || c != nil && c.Code == CauseProviderUnavailable
	}))
}

// measure records the sizes of the attempt's first model request (see [Attempt].RequestBytes).
func (a *Attempt) measure(req *llm.Request) {
	if a.RequestBytes > 0 {
		return
	}
	whole, err := json.Marshal(req)
	if err != nil {
		return
	}
	tools, _ := json.Marshal(req.Tools)
	a.RequestBytes, a.FixedBytes = len(whole), len(req.System)+len(tools)
}
