// Package refusal is the error type of rein's guards: a refusal carries a stable [Code] for
// programs and a message for people and models that says what was refused and what to do
// instead.
//
// Contract:
//
//   - Codes are stable strings ("policy.denied", "policy.protected_path"…): logs, ledgers and
//     exit-code tables key on them, so a code is never renamed once released. Each code is
//     declared by the package that refuses with it (internal/policy for permission decisions
//     and role surfaces, internal/pathrule for protected paths, internal/secret for the
//     secret scanner, internal/command for approved commands); this package declares none.
//   - [Error.Is] matches an *[Error] target that has the same code and nothing else, so
//     errors.Is(err, &refusal.Error{Code: c}) asks "was this refused with c?". [CodeOf]
//     returns the code of the first *Error in a chain.
//   - [Error.Unwrap] returns the cause, when there is one.
//
// The package is a leaf: it imports only the standard library, so any guard can use it
// without linking another.
package refusal
