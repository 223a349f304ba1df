// Package hooks lets code intercept an agent run at fixed points and change what happens there.
// Events (kernel.Event) observe a run and cannot change it; hooks are awaited and can.
//
// Points, in the order a run meets them (the payload types are the Event implementations of
// this package; a hook changes a run by assigning to the payload's fields):
//
//   - session_start ([SessionStart]): once per agent, before its first run or compaction. May
//     replace or extend the system prompt of every run of the agent.
//   - before_agent_start ([BeforeAgentStart]): at the start of each run, before the prompt is
//     recorded. May replace the prompt, replace or extend the system prompt of this run, or
//     refuse the prompt (Block): nothing is recorded and the run ends blocked.
//   - context ([Context]): before each model request, after the kernel's own context hooks. May
//     replace the message list sent (never what is recorded).
//   - before_provider_request ([BeforeProviderRequest]): the finished provider-neutral request,
//     just before it is sent. May replace it.
//   - before_tool ([BeforeTool]): after a call's arguments validated and the permission gate
//     allowed it, before its intent is recorded. May block it with a reason (the model sees the
//     reason as the call's error result; the tool never runs) or rewrite its arguments, which
//     are validated again against the tool's schema (an invalid rewrite is the call's error
//     result).
//   - after_tool ([AfterTool]): after a tool ran, before its result is recorded. May replace
//     the result (what is recorded is what the model sees).
//   - before_compact ([BeforeCompact]): before a compaction (automatic or manual). May cancel
//     it or supply the summary (the compactor's model is then not called).
//   - turn_end ([TurnEnd]): after each turn that did not fail, its results recorded.
//   - stop ([Stop]): when the model answered without tool calls and the run would complete. May
//     make the run go on with a user message (Continue).
//   - session_end ([SessionEnd]): once, when the agent is done (kernel Agent.End).
//
// Order. Hooks of one point run one after another in registration order; each sees the payload
// as the previous one left it, so rewrites chain. A decision ends the chain: the first hook
// that blocks (before_tool, before_agent_start), cancels or supplies a summary (before_compact)
// or continues the run (stop) wins, and later hooks of that point do not run for this event.
// [StopRun] returned by any hook ends the chain and asks the kernel to stop the run.
//
// Failure. A hook that returns an error or panics never takes the loop down: the panic is
// recovered, the payload is restored to what it was before that hook, and the run is reported
// ([Options.Report]). What follows depends on the hook's fail mode:
//
//   - fail open (the default): the failure is reported and ignored; the next hook runs.
//   - fail closed ([FailClosed]): [Registry.Run] returns an *[Error]; the kernel then refuses
//     what the point guards: before_tool blocks the call, after_tool replaces the result with
//     an error result, before_compact cancels the compaction, and any other point ends the run
//     blocked.
//
// Concurrency. Register every hook before the first Run; Run may be called from several
// goroutines at once (the kernel calls after_tool as the tools of a parallel batch finish, one
// at a time).
package hooks
