// Package openaicompat is the Chat Completions adapter ([llm.Model]) for any server that speaks
// OpenAI's /chat/completions wire: ollama, vLLM, llama.cpp server, LM Studio, and OpenAI itself
// (package openai uses this package, in OpenAI's dialect, for its chat API). It speaks the wire itself
// on net/http ([sse.Client], [sse.Decoder]: the openai-go SDK it was built on was 40 % of
// the binary), with the environment ignored and no retries; retrying is [llm.Retry]'s job. The
// request body is encoded by the adapter (a test checks it against the SDK's encoding,
// recorded in testdata/sdkbody); each message's encoding is kept, in one append-only buffer,
// for the next request, which encodes only what is new and sends the kept encodings from that
// buffer without copying them (a request whose [llm.Request.Lineage] is the previous one's
// vouches that the messages it had are unchanged: they are sent as one run of that buffer
// without being read, and [llm.HealGrown] checks only the new ones; any other request has
// every message compared with what was kept); the rest of the body is written into the buffer of the
// previous request once the transport is done with it; a finished stream's body is read to its end so that the
// connection is reused. Chunks are decoded with encoding/json: unknown fields are ignored,
// malformed JSON is a protocol error, a line or an event over [sse.MaxLine] too.
//
// Contract, beyond the one of package llm:
//
//   - Request: stream true with stream_options.include_usage; the system prompt as a role
//     "system" message; the history healed with [llm.Heal] (failed assistant messages dropped,
//     a tool call without result answered with "No result provided"); user text and images
//     (data URLs); assistant text and tool calls, with arguments sent back verbatim when they
//     are valid JSON and as "{}" otherwise (a truncated or invalid call, whose tool result
//     already says so; template-rendering servers reject invalid JSON); tool results as role
//     "tool" (images in them, which that role cannot carry, follow the run of results as one
//     user message). Thinking is never sent back: the chat wire has no field for it. Tools are
//     {type: function, function: {name, description, parameters}}. The [Compat] settings add
//     what only some servers accept: max_completion_tokens instead of max_tokens,
//     reasoning_effort, prompt_cache_key, "strict": false. An empty API key sends no
//     Authorization header (keyless local servers).
//   - Stream: content deltas become text; reasoning_content / reasoning deltas (vLLM,
//     llama.cpp, DeepSeek, ollama) become thinking; tool calls are assembled by index, and
//     tolerated when the index or id is missing (ids are synthesized as "call_<index>", made
//     unique), when an index is reused for a new call, or when the arguments arrive whole, even
//     as a JSON object instead of a string.
//   - Completeness: a stream is an answer only when a choice carried a finish_reason and the
//     body did not end inside an event (whether "[DONE]" follows or the body simply ends), or
//     when the "[DONE]" terminator came without any finish_reason (lenient servers). A body that
//     ends with neither, ends in the middle of an event, or carried no chunk at all is a
//     retryable [llm.KindIncompleteStream] failure; so is a transport failure after the
//     response headers. Every request runs under a [watchdog.Exchange] (Config.Timeouts).
//   - Stop reason: length → length; content_filter → a terminal error; anything else (stop,
//     tool_calls, function_call, a dialect's own word, or no finish_reason before [DONE]) →
//     toolUse when the message has tool calls, else stop.
//   - Usage: taken from the last chunk that has one; input = prompt_tokens − cached, cacheRead =
//     prompt_tokens_details.cached_tokens (or DeepSeek's prompt_cache_hit_tokens), cacheWrite 0,
//     priced with Config.Pricing. No usage at all is zero usage, not an error.
//   - Errors: an HTTP status ≥ 400 → classified by [llm.ProviderError] from the error object's
//     code (insufficient_quota: a terminal spend limit even as a 429; rate_limit_exceeded;
//     context_length_exceeded; invalid_api_key), then its type, then the status, and from the
//     message only where those are absent or generic; the message is the body's, the wait is
//     retry-after-ms or retry-after. An error object inside the stream is classified the same
//     way, and is a retryable server error when nothing in it is recognisable
//     ([oaisdk.StreamFailure]); a connection that fails before the response headers → a
//     retryable network error; no headers within the header timeout → a retryable timeout; no
//     byte within the idle timeout → a retryable incomplete stream; a malformed chunk → a
//     protocol error; cancellation → aborted. No error message contains the API key.
package openaicompat
