// Package anthropic is the [llm.Model] adapter for Anthropic's Messages API, streaming. It is
// rein's own request encoding and stream decoding on package sse's HTTP client and
// server-sent-event decoder (the official SDK it was once built on was 15 % of the binary;
// bench/NOTES.md). The bodies it writes are, as JSON, those the SDK wrote (testdata/sdkbody).
//
// It keeps the contract of package llm (checked by llmtest): Stream never panics and never
// returns a Go error, emit is called synchronously and in stream order, the first event is
// [llm.EventStart] and the last is [llm.EventDone] or [llm.EventError] carrying the returned
// message, and the adapter does not retry.
//
// # Client
//
// [New] configures the client from [Config] alone:
//   - No ANTHROPIC_* variable, profile or config file is read; credentials and base URL are
//     rein's business. The base URL defaults to https://api.anthropic.com; requests go to
//     {base}/v1/messages.
//   - No retries: retrying is done by [llm.Retry], which honours retry-after.
//   - No trace-context headers: rein records model calls in its own spans (chat {model}).
//   - The key is sent in the x-api-key header, never as a bearer token; every request carries
//     anthropic-version: 2023-06-01 and no anthropic-beta header. With neither an API key nor a
//     base URL, Stream fails at once with [llm.KindUnavailable]; an unusable base URL is
//     [llm.KindInvalid].
//
// # Request
//
//   - The history is healed with [llm.Heal] first: failed and aborted assistant messages are
//     dropped, and a tool call without a result gets a synthetic error result.
//   - Tool results become tool_result blocks of user messages; consecutive messages of one role
//     are merged, so one batch of results, and a user message after it, is one user message.
//     Empty text parts are not sent; images are sent as base64 blocks.
//   - Thinking of an assistant message is replayed as a thinking block (with its signature) or
//     a redacted_thinking block (its payload is [llm.Part.Signature]) only when the message came
//     from the same model through this API; otherwise readable thinking is sent as text and
//     redacted thinking is dropped, since the API rejects signatures it did not issue.
//   - Tool-call arguments are sent as the tool_use input when they are a JSON object, and as {}
//     otherwise (truncated or invalid arguments, which the kernel already answered with an
//     error result). Tool schemas ([llm.ToolSpec.Schema]) are sent verbatim as input_schema; a
//     missing or malformed schema is sent as {"type":"object"}.
//   - max_tokens is the request's MaxTokens, else [Config.MaxTokens], else
//     [llm.DefaultMaxOutput]. A thinking level other than off enables budget thinking with
//     [llm.ThinkingLevel.ThinkingBudget] tokens added on top of max_tokens, both capped by
//     Config.MaxTokens when known; the budget shrinks to leave at least 1024 output tokens, and
//     thinking stays off when that leaves a budget under the API's minimum of 1024
//     ("thinking": {"type": "enabled", "budget_tokens": …}).
//   - Prompt caching: the system prompt and the last block of the last message carry an
//     ephemeral cache_control breakpoint (unless that block is thinking, which takes none), so a
//     growing conversation reuses its prefix.
//
// # Stream
//
//   - Events are read with package sse's decoder and dispatched on their data's "type";
//     message_start gives the response id and the first usage; ping events and unknown types
//     are ignored. An event named "error", or whose type is "error", is an error event.
//   - content_block_start/delta/stop of text, thinking and tool_use blocks become the
//     text_*, thinking_* and toolcall_* events; [llm.Event.Index] is the part's index in the
//     message content. signature_delta fills [llm.Part.Signature]; a redacted_thinking block
//     is a thinking part with Redacted set and no deltas. toolcall_start carries the call's id
//     and name; toolcall_delta carries each partial_json verbatim (empty ones are skipped);
//     toolcall_end carries the whole call. Arguments are the concatenated partial_json, exactly
//     as sent; a call that received none gets its start input, or "{}", as one last delta.
//     Blocks of other kinds (server tools) are ignored; blocks left open at message_stop are
//     closed.
//   - Stop reasons: end_turn and stop_sequence → stop; max_tokens and
//     model_context_window_exceeded → length; tool_use → toolUse. refusal and pause_turn → stop:
//     rein sends no server tools, so a paused turn has nothing to resume, and a refusal is the
//     model's answer. A missing or unknown reason is toolUse when the message has tool calls,
//     stop otherwise.
//   - Usage: input_tokens, output_tokens, cache_read_input_tokens and
//     cache_creation_input_tokens map to Input, Output, CacheRead and CacheWrite; each value of
//     message_delta overrides message_start's. A stream without usage reports zero usage.
//     Costs come from [Config.Pricing]. Failed messages keep the usage received so far.
//
// # Errors
//
//   - An HTTP error status is classified by [llm.ProviderError] from the structured fields of the
//     error body first — error.details.error_code (e.g. enforced_spend_limit_reached: a terminal
//     spend limit, even as a 429), then error.type (overloaded_error, rate_limit_error: retryable;
//     authentication_error, permission_error: auth; billing_error: spend limit;
//     request_too_large: context), then the status — and from the message only where those are
//     generic: an invalid_request_error saying "prompt is too long" is [llm.KindContext], one
//     saying the credit balance is too low a spend limit. The message is "type: message" (or the
//     raw body); the wait is retry-after-ms or retry-after (seconds or an HTTP date).
//   - A mid-stream error event is classified the same way from its type and code, with Status
//     0; an unknown type with no recognisable text is a retryable server error.
//   - A stream is an answer only when message_stop arrives after a message_delta carrying a
//     stop_reason. A body that ends before (cleanly or by a read error), a message_stop with no
//     stop_reason, or a body silent for longer than the idle timeout is a retryable
//     [llm.KindIncompleteStream] failure; the partial message is returned failed, never as
//     the answer; so is a body that ends inside an event. A connection that fails before
//     the response headers is a retryable network
//     error ([llm.TransportError]); no headers within the header timeout a retryable
//     [llm.KindTimeout] (Config.Timeouts, package watchdog). A cancelled caller context is an
//     abort. An event that cannot be decoded, a line over the decoder's bound, or a delta for a
//     block that was never started, is a [llm.KindProtocol] error.
//   - The API key never appears in an error message: should a server echo it, it is replaced
//     by "[redacted]". A panic inside Stream is recovered as a protocol error, as a last resort.
package anthropic
