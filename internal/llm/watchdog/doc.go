// Package watchdog bounds how long one HTTP exchange with a model provider may stay silent.
// An [Exchange] is installed as a request middleware of the provider SDK (both SDKs take a
// func(*http.Request, next) (*http.Response, error)) and watches that one request:
//
//   - Header timeout: from sending the request until its response headers arrive, at most
//     [Limits.Header]. When it passes, the request is cancelled and the round trip fails with
//     an [*Error] of phase [PhaseHeaders], a retryable [llm.KindTimeout].
//   - Idle timeout: once the headers are in, every read of the body that yields bytes re-arms
//     one timer to [Limits.Idle]. When no byte arrives for that long, the request is cancelled
//     and the blocked read fails with an [*Error] of phase [PhaseBody], a retryable
//     [llm.KindIncompleteStream].
//
// One timer per exchange, reset on each read: no goroutine per chunk. The timeouts never fire
// for a caller's own cancellation, which the adapters report as an abort.
//
// The Exchange also records what the adapters need to classify a failure: whether response
// headers arrived ([Exchange.Responded]: a failure after them is an incomplete stream, before
// them a network error) and the first transport error ([Exchange.Err]).
package watchdog
