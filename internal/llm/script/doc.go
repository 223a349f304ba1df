// Package script is rein's offline, deterministic model: an [llm.Model] that answers from a
// scenario file instead of a network, for demos, tests and CI. Provider and API are both
// "script" ([llm.ProviderScript], [llm.APIScript]).
//
// # Scenario files
//
// A scenario is YAML or JSON (the full reference with examples is docs/script-format.md):
//
//	version: 1                    # required; the only version
//	description: free text        # optional; ignored
//	model: script-demo            # optional; the model name answers carry (default "script")
//	pricing: {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75}  # optional; $ per 1M tokens
//	dialogs:
//	  - match: "(?i)create a file"  # optional RE2 regexp searched in the last user message
//	    turns:
//	      - thinking: "..."         # optional thinking block
//	        text: "..."             # optional text block
//	        calls:                  # optional tool calls
//	          - name: write
//	            id: call_1          # optional; default derived from the request
//	            args: {path: a.txt, content: "hi"}  # an object, sent as compact JSON
//	                                # ${name}: the match's named group (?P<name>…), JSON-escaped
//	            raw: '{"path": '    # or: the literal argument text (not both)
//	        stop: toolUse           # stop | length | toolUse; default toolUse with calls, else stop
//	        usage: {input: 10, output: 5, cacheRead: 0, cacheWrite: 0}
//	        delay: 50ms             # optional wait before every event after start
//	        error: {kind: rate_limit, message: "...", status: 429, retryAfter: 2s, partial: "..."}
//	        times: 2                # with error: fail the first 2 attempts, then answer
//
// A top-level "turns:" list instead of "dialogs:" is short for one dialog without match.
// Parsing is strict: unknown, duplicate or mistyped fields, an unknown stop reason or error
// kind, args that are not an object, args together with raw, and a turn with nothing to say
// are all errors. Every problem is a [*ParseError] naming the file, line, column and field
// path, such as "demo.yaml:12:9: dialogs[0].turns[1].stop: unknown stop reason ...". A file
// named *.json is read as JSON, *.yaml or *.yml as YAML, anything else as JSON when it is
// valid JSON and as YAML otherwise. JSON is checked strictly (syntax, trailing data,
// duplicate keys, exact field-name case).
//
// # Which turn answers a request
//
// The answer is a function of the request's messages, never of earlier calls, so a resumed
// or replayed session, or a fresh Model given a conversation mid-way, gets the same answer.
// Stream first applies [llm.Heal] (failed and aborted assistant messages are dropped), then:
//
//  1. the user text is the text of the last user message ("" when there is none);
//  2. the step is the number of assistant messages after that user message (0-based: the
//     first answer to a user message is step 0, the answer after its tool results step 1);
//  3. the first dialog whose match finds the user text (a dialog without match finds any)
//     decides, and its turn number step answers. Later dialogs are not tried.
//
// A new user message — a follow-up or a steering message — starts again at step 0 of the
// dialog it matches. When no dialog matches, or the deciding dialog has fewer turns than the
// step, the answer is a failed message ([llm.StopError]) whose [llm.Error] has kind
// [llm.KindInvalid], is not retryable, and says which user message and step had no scripted
// answer and which dialog decided.
//
// Default tool-call ids are "call_<12 hex>_<i>": a digest of the healed conversation (roles,
// content and tool-result links; not timestamps or provenance) and the call's index in the
// turn. The same request always gets the same ids; two requests of one conversation never do.
//
// # Scripted failures and attempts
//
// A turn with error fails with an [llm.Error] of that kind. Kinds rate_limit (HTTP 429),
// overloaded (529), server (500) and network are retryable; auth (401), invalid (400),
// context (400), spend_limit, protocol and unavailable are terminal, as [llm.ProviderError]
// classifies real providers. status overrides the HTTP status, retryAfter sets
// [llm.Error.RetryAfterMs], and partial is text streamed before the failure (the text block
// is left open, as a stream cut mid-way leaves it). "aborted" cannot be scripted: it happens
// only when the caller cancels.
//
// Without times the turn fails on every attempt. With times: N it fails the first N attempts
// and then answers with its text, thinking and calls. A retry resends the same request, so
// attempts cannot be read from the request: they are the one piece of state, counted in the
// Model instance per request digest (the digest of the default ids). A fresh instance, or
// one made by [Model.WithName] or [Model.WithPricing], starts counting again, as a flaky
// provider would fail again after a restart. A call whose context is already cancelled is
// not counted.
//
// # Streaming
//
// Stream keeps the contract of package llm. It emits start; then, in this order, a thinking
// block (thinking_start, one thinking_delta per word with its trailing whitespace,
// thinking_end), a text block (likewise), and each tool call (toolcall_start with id and name,
// its arguments in up to about eight toolcall_delta chunks split on rune boundaries,
// toolcall_end with the whole call); and last done, or error, carrying the returned message.
// Content indexes count the blocks from 0. Deltas always add up to the message content.
//
// delay is waited before every event after start. Cancelling the context during a delay or
// between events ends the stream with [llm.StopAborted] and keeps the content sent so far; a
// context deadline ends it as a retryable network error, as with real adapters.
//
// Messages carry Provider and API "script", the model name, a ResponseID derived from the
// request digest, and a non-nil Usage: the scripted usage priced at the model's pricing
// ([llm.Usage.Price]; zero by default) for answers, zero for failures. Time is left zero for
// the caller to stamp. The request's tools, system prompt, token limit and thinking level are
// not consulted: a scenario may call tools the request does not offer.
//
// A Model is immutable after parsing except for its attempt counters, and safe for concurrent
// use. emit is called synchronously, never after Stream returns.
package script
