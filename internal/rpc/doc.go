// Package rpc is rein's RPC mode (`rein --mode rpc`): a client drives one agent through JSON
// commands on stdin and reads responses and events on stdout. The README documents the
// commands with a complete example session.
//
// Framing and parsing:
//
//   - Input is split at "\n" only; a "\r" before it is dropped; U+2028 and U+2029 are ordinary
//     characters. A line longer than Options.MaxLine (default [DefaultMaxLine]) is discarded
//     without being buffered whole and answered with an error. Blank lines are ignored.
//   - Each line is untrusted and parsed strictly (package strictjson): duplicate keys, unknown
//     fields, keys in the wrong case, invalid UTF-8 and trailing data are errors. A line that is
//     no command object gets a response with command "parse"; an unknown command type gets an
//     error response naming the known ones. Neither stops the server.
//   - Every output line is one JSON object with "v" (the wire version) written with a single
//     Write: a [Response] ({"type":"response", "id"?, "command", "success", "data"|"error"}) or
//     an event of package wire. Events carry no id.
//
// Ordering and concurrency:
//
//   - Commands are handled one at a time, in order, on the goroutine that called [Serve]; a run
//     or a compaction runs on a goroutine of its own, so that steer, follow_up, abort and the
//     get_* commands are answered while it runs.
//   - A command that starts a run (prompt, steer or follow_up when idle, continue) is answered
//     before the run's first event. compact is answered when the compaction ends, after its
//     events. abort is answered once the run has ended, after its agent_end.
//   - steer during a run queues a message the agent receives after the current turn's tool
//     batch (kernel.Inbox); follow_up one it receives when it would otherwise stop. A message
//     queued after the agent's last look starts another run once the run completes; a run
//     that ends otherwise (aborted, failed, budget) drops the queue. Every change of the queue
//     is a queue_update event.
//   - abort records the cancellation durably in the session (session.Cancel) before it
//     cancels the run, then waits for the run to end.
//   - At the end of stdin the server waits for the run in progress and returns nil. When
//     Serve's context is cancelled (SIGINT, SIGTERM) it aborts the run the same way and
//     returns an error matching kernel.ErrAborted. When stdout cannot be written it aborts and
//     returns [ErrClosed].
//   - The package opens agents through a [Host] (package cli implements it over package
//     system); without a session it keeps the conversation in memory between runs.
package rpc
