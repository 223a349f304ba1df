// Package kernel runs the agent loop: it asks a model for a turn, runs the tool calls the turn
// contains, feeds the results back, and stops when the model is done, a budget is reached, the
// context is cancelled, or the model fails.
//
// Guarantees:
//
//   - Every effect is recorded through the [Recorder] before it happens: an [Intent] naming the
//     ids its result will carry, then a [Settlement] with exactly those ids. A recorder error
//     stops the run at once; no effect starts after a failed intent.
//   - Every request to the model is preceded by a durable record: the model call's intent for
//     its first attempt, and, when the Recorder is an [AttemptRecorder], an attempt record for
//     each retry the model's retry decorator makes ([llm.WithAttempts]). Such a recorder numbers
//     attempts over processes; a call it reports given up ([GaveUpError]) is not sent and the
//     run ends with a *[ModelError].
//   - Every tool call of an assistant message gets exactly one result, in source order, whatever
//     happens: unknown tool, invalid arguments, a message cut by the output token limit (whose
//     calls are never executed), a tool error or panic, or cancellation.
//   - Arguments are validated strictly against the tool's schema before a tool runs
//     ([tool.Validate]); an invalid call becomes an error result the model sees, as does one
//     whose arguments exceed [MaxArgumentBytes].
//   - Tool-call ids are unique in the session: before an assistant message is recorded, a call
//     whose provider id is empty, malformed, longer than [MaxCallIDBytes], repeated in the
//     message or already used (in the context, or by the recorder's [CallIDs]) gets the id
//     rein_<n>_<original's safe characters>, the provider's kept in ToolCall.ProviderID. The
//     assigned id is the one results answer and adapters send back.
//   - A validated call is put to the [Gate] (Config.Gate) before its intent: a refusal is the
//     call's error result, the tool never runs and no intent is recorded. Refusals are listed
//     in [Outcome].Refused; one matching [ErrNeedsApproval] ends an otherwise completed run
//     as [StatusBlocked] with a *[BlockedError].
//   - Hooks (Config.Hooks, see package hooks) intercept a run at fixed points. before_tool runs
//     after the gate: a block is the call's error result (listed in [Outcome].Refused); a
//     rewrite is validated and put to the gate again, and the intent records the rewritten
//     call. after_tool runs before the result is recorded (one call at a time), so what is
//     recorded is what the model sees. Context and request hooks run before the model call's
//     intent: one that fails leaves no open intent. A hook that refuses the prompt, asks to
//     stop, or fails closed where that guards the run ends it as [StatusBlocked] with a
//     *[HookError] (matching [ErrHookBlocked]); a stop asked during a tool batch takes effect
//     once the batch is recorded. session_start runs once per Agent, session_end on [Agent.End].
//     [Agent.Replay] runs no hooks.
//   - A run's requests carry one [llm.Request.Lineage] while its context only grows: none
//     while Config.ContextHooks or hooks at a point whose payload holds the context's messages
//     (context, before_provider_request, turn_end) may edit it; a compaction or a stop hook
//     starts a new one. Adapters may then skip reading the messages an earlier request had.
//   - A batch runs in parallel unless one of its tools is [tool.Spec.Sequential]. Preflight
//     (lookup, validation, gate) and intents happen in source order; tool_end events arrive in
//     completion order; results enter the context in source order.
//   - Cancelling the context aborts the run: the model stream ends as aborted, running tools are
//     cancelled (the shell tool kills its whole process group), calls not yet started get an
//     "aborted" result, and [Run] returns an error matching [ErrAborted].
//   - Messages queued in the [Inbox] (Config.Inbox) enter only at a turn boundary: steering
//     messages after the turn's tool results (or instead of stopping), follow-ups only when the
//     model stopped and no steering message waits. Each is recorded as a user entry first.
//   - Every successful Recorder call is followed by a session_write event ([Write]), with the
//     recorder's position when it is a [Positioner].
//   - Observers (Config.Observe) see events synchronously on the loop's goroutine (tool events
//     from a parallel batch are serialized); they cannot change execution.
//
// The kernel imports provider-neutral types only: no network, terminal or workflow engine.
package kernel
