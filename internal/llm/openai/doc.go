// Package openai is the [llm.Model] adapter for OpenAI. It speaks the wire itself on net/http
// (package oaisdk's client and event-stream decoder), with the environment ignored
// (OPENAI_API_KEY and friends are not read: the key comes from [Config]) and no retries;
// retrying is [llm.Retry]'s job.
//
// Config.API selects the wire. llm.APIOpenAIChat is Chat Completions, served by package
// openaicompat in OpenAI's dialect (see its documentation). llm.APIOpenAIResponses (the
// default) is the Responses API, described here.
//
// Request: stream true, store false (nothing is kept server side; the history is sent in
// full), instructions = the system prompt, max_output_tokens, tools as function tools with
// strict false, prompt_cache_key = Request.SessionID. A thinking level other than off sends
// reasoning {effort: level, summary: auto} and includes reasoning.encrypted_content; "off"
// sends no reasoning parameter (the model's default applies); callers ask for thinking only
// from reasoning models (llm.ModelInfo.Reasoning), since others reject the parameter. The history is healed with
// [llm.Heal], then mapped: user messages as input messages (text, images as data URLs); tool
// results as function_call_output (text, or text and images); assistant messages as follows.
//
// Reasoning replay: an assistant message that came from this same model through the Responses
// API and has a thinking part holding an encrypted reasoning item is replayed exactly: the
// reasoning item (id, summary, encrypted_content), its text as output messages with their
// item ids, and its tool calls as function_call items with their item ids. Any other assistant
// message (another model or provider, or no encrypted reasoning) drops its thinking and sends
// text as a plain assistant message and tool calls as function_call items without item ids,
// which the API always accepts. Past tool-call arguments that are not valid JSON are sent as
// "{}".
//
// Stream: response.output_text.delta (and refusal deltas) become text, whose part Signature is
// the message item id; response.reasoning_summary_text.delta and response.reasoning_text.delta
// become thinking (summary parts joined by a blank line), whose part Signature is the raw
// reasoning item when it carries encrypted content (a reasoning item with encrypted content
// but no summary becomes an empty thinking part, so that it can be replayed); function_call
// items become tool calls (ID = call_id, part Signature = the item id), assembled from
// response.function_call_arguments.delta and completed from the .done events.
//
// End: response.completed → toolUse when there are tool calls, else stop;
// response.incomplete → length (max_output_tokens) or a terminal error (content_filter);
// response.failed and error events → classified by [oaisdk.StreamFailure] from their code
// first (server errors, overload and rate limits retryable; insufficient_quota,
// context_length_exceeded, invalid_prompt terminal); a stream that ends without one of these, or is cut
// after the response headers, or stays silent past the idle timeout → a retryable
// incomplete_stream error (the partial message is a failure, never an answer); no headers
// within the header timeout → a retryable timeout (Config.Timeouts, package watchdog). Usage: input = input_tokens − cached_tokens, cacheRead =
// input_tokens_details.cached_tokens, cacheWrite 0, output = output_tokens (reasoning
// included), priced with Config.Pricing. HTTP errors and cancellation are handled as in
// package openaicompat. No error message contains the API key.
package openai
