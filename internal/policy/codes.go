package policy

import (
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/refusal"
)

// The codes of policy's refusals (*[refusal.Error]). Codes are stable strings: logs, ledgers
// and exit-code tables key on them, so a code is never renamed once released.
const (
	// CodeDenied: a deny rule matched the call.
	CodeDenied refusal.Code = "policy.denied"
	// CodeApprovalRequired: an ask rule matched; an interactive run asks the user, a
	// non-interactive run refuses with this code.
	CodeApprovalRequired refusal.Code = "policy.approval_required"
	// CodeProtectedPath: the call would write to a protected path (.git, .rein policy files…).
	// It is the code the file tools refuse protected writes with ([pathrule.CodeProtectedPath]).
	CodeProtectedPath = pathrule.CodeProtectedPath
	// CodeUnparseable: the bash command line does not parse.
	CodeUnparseable refusal.Code = "policy.unparseable"
	// CodeUnanalysable: the command line parses but uses a construct whose effect cannot be
	// known before it runs (a variable as command name, a script fed through a pipe…).
	CodeUnanalysable refusal.Code = "policy.unanalysable"
	// CodeBadRule: a permission rule or a protected path glob is malformed
	// ([pathrule.CodeBadRule]).
	CodeBadRule = pathrule.CodeBadRule
	// CodeBadArguments: the tool arguments could not be read for a policy decision.
	CodeBadArguments refusal.Code = "policy.bad_arguments"
	// CodeUnknownRole: a role name is not one of the defined roles.
	CodeUnknownRole refusal.Code = "policy.unknown_role"
	// CodeToolNotInRole: the tool is outside the role's surface.
	CodeToolNotInRole refusal.Code = "policy.tool_not_in_role"
	// CodeReviewMutation: a reviewer attempted a tool that changes state.
	CodeReviewMutation refusal.Code = "policy.review_mutation"
)

func errorf(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}
