// Package kernel runs the agent loop: it asks a model for a turn, runs the tool calls the turn
// contains, feeds the results back, and stops when the model is done, a budget is reached, the
// context is cancelled, or the model fails.
//
// Guarantees:
//
//   - Every effect is recorded through the [Recorder] before it happens: an [Intent] naming the
//     ids its result will carry, then a [Settlement] with exactly those ids. A recorder error
//     stops the run at once; no effect starts after a failed intent.
//   - Every tool call of an assistant message gets exactly one result, in source order, whatever
//     happens: unknown tool, invalid arguments, a message cut by the output token limit (whose
//     calls are never executed), a tool error or panic, or cancellation.
//   - Arguments are validated strictly against the tool's schema before a tool runs
//     ([tool.Validate]); an invalid call becomes an error result the model sees.
//   - A validated call is put to the [Gate] (Config.Gate) before its intent: a refusal is the
//     call's error result, the tool never runs and no intent is recorded. Refusals are listed
//     in [Outcome].Refused; one matching [ErrNeedsApproval] ends an otherwise completed run
//     as [StatusBlocked] with a *[BlockedError].
//   - A batch runs in parallel unless one of its tools is [tool.Spec.Sequential]. Preflight
//     (lookup, validation, gate) and intents happen in source order; tool_end events arrive in
//     completion order; results enter the context in source order.
//   - Cancelling the context aborts the run: the model stream ends as aborted, running tools are
//     cancelled (the shell tool kills its whole process group), calls not yet started get an
//     "aborted" result, and [Run] returns an error matching [ErrAborted].
//   - Observers (Config.Observe) see events synchronously on the loop's goroutine (tool events
//     from a parallel batch are serialized); they cannot change execution.
//
// The kernel imports provider-neutral types only: no network, terminal or workflow engine.
package kernel
