package policy

import (
	"errors"
	"fmt"
)

// Code classifies a refusal. Codes are stable strings: logs, ledgers and exit-code tables key
// on them, so a code is never renamed once released.
type Code string

const (
	// CodeDenied: a deny rule matched the call.
	CodeDenied Code = "policy.denied"
	// CodeApprovalRequired: an ask rule matched; an interactive run asks the user, a
	// non-interactive run refuses with this code.
	CodeApprovalRequired Code = "policy.approval_required"
	// CodeProtectedPath: the call would write to a protected path (.git, .rein policy files…).
	CodeProtectedPath Code = "policy.protected_path"
	// CodeHardLinked: a file tool would write a file that has more than one hard link, so
	// the write would also change names of it elsewhere (possibly outside the workspace).
	CodeHardLinked Code = "policy.hard_linked"
	// CodeUnparseable: the bash command line does not parse.
	CodeUnparseable Code = "policy.unparseable"
	// CodeUnanalysable: the command line parses but uses a construct whose effect cannot be
	// known before it runs (a variable as command name, a script fed through a pipe…).
	CodeUnanalysable Code = "policy.unanalysable"
	// CodeBadRule: a permission rule is malformed.
	CodeBadRule Code = "policy.bad_rule"
	// CodeBadArguments: the tool arguments could not be read for a policy decision.
	CodeBadArguments Code = "policy.bad_arguments"
	// CodeUnknownRole: a role name is not one of the defined roles.
	CodeUnknownRole Code = "policy.unknown_role"
	// CodeToolNotInRole: the tool is outside the role's surface.
	CodeToolNotInRole Code = "policy.tool_not_in_role"
	// CodeReviewMutation: a reviewer attempted a tool that changes state.
	CodeReviewMutation Code = "policy.review_mutation"
	// CodeUnknownCommand: no approved command has the requested id.
	CodeUnknownCommand Code = "policy.unknown_command"
	// CodeInvalidCommand: an approved command declaration is unusable.
	CodeInvalidCommand Code = "policy.invalid_command"
	// CodeCommandFailed: an approved command could not be started.
	CodeCommandFailed Code = "policy.command_failed"
	// CodeSecretFound: text that would leave rein contains a secret.
	CodeSecretFound Code = "policy.secret_found"
	// CodeScanFailed: the secret scanner failed; the text must not be emitted.
	CodeScanFailed Code = "policy.scan_failed"
)

// Error is a refusal: a code for programs and a message for people and models that says what
// happened and what to do instead.
type Error struct {
	Code    Code
	Message string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same code, so errors.Is(err, &Error{Code: c}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == "" && t.Err == nil
}

// CodeOf returns the code of the first *Error in err's chain.
func CodeOf(err error) (Code, bool) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code, true
	}
	return "", false
}

func errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
