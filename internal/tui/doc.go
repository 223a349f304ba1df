// Package tui is rein's interactive terminal UI (`rein` with no arguments on a terminal):
// a conversation with the agent on the same kernel, session and event stream as every other
// mode. It opens its agents through a [Host] (package cli implements it over the composition
// root, package system), drives them through the small [Runtime] interface (Begin, Cancel,
// Compact, Context, Usage, Head, Close — the session lifecycle), and renders the wire event
// stream (package wire) that --mode json prints and RPC clients read. It has no second path
// to a model or a tool: hooks, telemetry, the permission gate and the session records are
// those of every run.
//
// Goroutines: the bubbletea program's goroutine owns the [Model]. Each run runs on a
// goroutine of its own; its events, queue changes, approval questions, notices and its end
// reach the model one message at a time through the engine's channel, so the agent waits
// (back-pressure) while the UI draws. Before the UI starts (while the first runtime opens and
// a resumed session recovers) nothing is sent: notices are kept and shown first.
//
// Guarantees:
//
//   - Text from models and tools passes termtext before it is drawn: it can never move the
//     cursor, recolour or clear the screen.
//   - Streaming is incremental: a delta is wrapped into final rows and one open row, and a
//     frame reads only the rows it shows, so an answer costs time linear in its length
//     (BenchmarkStreamedAnswer). A finished answer is rendered as markdown once.
//   - Esc (and the first Ctrl+C) aborts the run in progress through Runtime.Cancel — the
//     cancel is durable before the run is signalled — and a second Ctrl+C quits. Quitting
//     aborts the run first and waits for it to end; the runtime is closed by [Model.Close]
//     (Run does it) after the program returns, on every path: /quit, Ctrl+D, SIGINT/SIGTERM
//     (the context), a panic in the UI (bubbletea restores the terminal) or in a run
//     (reported as the run's error).
//   - Typing while the agent works queues the text (kernel.Inbox): Enter as a steer,
//     delivered after the current tool batch; Alt+Enter as a follow-up, delivered when the
//     agent would stop. Messages queued after the agent's last look start the next run when
//     the run completed, and go back into the editor when it did not.
//   - A call an "ask" permission rule holds is shown with its command or diff and waits for
//     the user: allow once, allow for this session (the same tool and command or path, in
//     memory only), always allow (the [RuleWriter]'s rule for the call added to the user's
//     or the trusted project's settings, in force at once; a later call whose exact rule a
//     settings file in force allows is not asked about), or deny with a reason that reaches
//     the model as the call's result. A
//     yes/no question (trust, hooks) asked after the UI started is asked in it too.
//   - /resume, /tree, /export, /permissions, /hooks and /skill:NAME read through a [Library]
//     the host may implement (package cli does, as `rein session ls` and `rein session
//     export` compute); /fork and /tree continue in a new forked session, never altering
//     the parent. Pickers (/resume, /tree) take the whole screen until Enter or Esc.
//   - "@…" at the end of the editor completes over the files a [Workspace] host lists (git's
//     tracked and unignored files, in package cli), read once per UI; "/…" as the whole
//     editor completes over the slash commands and the loaded skills (/skill:NAME). One
//     popup shows both: Up/Down choose (the first is chosen until they move), Tab takes the
//     chosen one (Enter too, for a command or after Up/Down), Esc closes the popup until the
//     editor changes and aborts nothing.
//   - A prompt's @path mentions are attached when it is sent, by the [Attacher] a host may
//     implement (package cli: the read and ls tools over the runtime's workspace, so a
//     mention reaches no more than a read call); the message carries the text as typed,
//     then one text part per attachment, and the transcript shows one line for each.
//     Refused mentions are shown as notices.
//   - A paste over 5 lines or 1,000 bytes shows as a placeholder ("[pasted 42 lines, 3.1 KB
//     #1]"); the message sent (and recorded) carries the whole text, and a deleted
//     placeholder takes its paste with it (Backspace after one deletes it whole).
//   - Ctrl+G opens $VISUAL, $EDITOR or vi on a private temporary file holding the input,
//     through package proc with the terminal handed to it (proc.Spec.Terminal); the file's
//     text replaces the input when the editor exits 0, and the input stays otherwise.
//   - The input editor is rein's own (input.go): soft-wrapped lines, 1 to 6 rows, a cursor
//     that does not blink; what enters it is stripped of control characters. Nothing runs
//     at package load: Ctrl+V looks up a clipboard reader on PATH when it is pressed and
//     runs it through package proc.
//   - Alt+Up (Up on an empty editor) takes the message queued last back into the editor
//     before the agent takes it; Enter queues it again.
//   - Without colour (NO_COLOR) every style is plain; what a colour says is also said by a
//     marker (›, ⏺, ✗, +, -, !).
package tui
