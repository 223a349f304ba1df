// Package llm holds rein's provider-neutral model: messages made of parts, tool calls, usage and
// cost, stop reasons, the stream of events an adapter emits, the model registry, and the typed
// errors providers fail with.
//
// Contract for every [Model] implementation (checked by package llmtest):
//
//   - Stream never panics and never returns a Go error. Every failure — HTTP status, transport
//     error, malformed stream, cancellation — ends as the returned final assistant [Message]
//     whose StopReason is [StopError] or [StopAborted] and whose Err describes the failure.
//     [StopAborted] is used only when the caller's context was cancelled.
//   - emit is called synchronously from the goroutine that called Stream, in stream order, and
//     never after Stream returns. The last event is always [EventDone] or [EventError], carrying
//     the same message Stream returns.
//   - A message is an answer only when the stream reached its wire format's terminal event.
//     A stream that ends, is cut or stays silent before it is a retryable
//     [KindIncompleteStream] failure (what arrived is kept on the failed message, for the
//     record); a request whose response headers never come is a retryable [KindTimeout].
//   - Tool-call arguments are kept exactly as the model produced them ([ToolCall.Arguments]), even
//     when they are not valid JSON: validation belongs to the caller.
//   - An adapter that keeps what it derived from earlier requests (encodings, [Heal]'s check)
//     reuses it without reading the messages again only for a request of the same
//     [Request.Lineage]; any other request's messages are compared with what was kept, so an
//     edit, a fork or a compaction is never sent stale.
//   - Adapters do not retry. Retrying is the job of the [Retry] decorator, which honours the
//     server's retry-after and classifies errors by [Error.Retryable].
package llm
