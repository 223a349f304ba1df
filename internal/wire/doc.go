// Package wire is rein's JSON event schema: the lines `--mode json` prints, the events an RPC
// client reads (`--mode rpc`), and what a UI renders. It is a versioned schema of its own,
// never a serialization of internal types; golden fixtures (testdata/*.jsonl, produced by a
// scripted run) pin it.
//
// Guarantees:
//
//   - Every line is one JSON object with "v" ([Version]) and "type". Fields may be added
//     without a version change; a change that breaks readers bumps [Version].
//   - Streaming updates carry deltas only: a message_update holds one provider delta (a few
//     words, an argument chunk), a tool_update the output added since the call's previous
//     update (or, when a tool's output window moved, the whole window with "reset": true).
//     The whole message comes once, in message_end (tool_end for a tool result).
//   - A failed model attempt that will be retried is a "retry" event; readers discard what
//     they showed of the attempt.
//   - [Converter] keeps per-stream state (the last update of each running tool); use one per
//     stream, fed in event order (the kernel serializes its events). [Writer] writes each
//     line with one Write call and is safe for concurrent use.
package wire
