// Package sse is the HTTP plumbing shared by rein's provider adapters (packages anthropic,
// openai and openaicompat): the streaming HTTP [Client] and the server-sent-event [Decoder].
// It is rein's own, on net/http: the providers' SDKs were most of the binary and of every
// start's RSS (bench/NOTES.md). What a provider's requests and events mean, and how its errors
// are classified, is the adapter's business.
//
// Guarantees:
//
//   - A [Client] never reads the environment and never retries: retrying is llm.Retry's job.
//     It sends the headers it was made with and no others of its own but Content-Type, Accept
//     and User-Agent.
//   - Every HTTP answer with status >= 400 is an [*HTTPError] carrying (a bounded prefix of)
//     its body and its headers, so the error object and the retry-after headers reach the
//     adapter's classification. A successful body, once closed, has been read to its end
//     (within bounds) so that the connection is reused.
//   - A [Decoder] reads the text/event-stream format in bounded memory per line ([MaxLine]) and
//     reports a body that ends inside an event ([Decoder.Cut]).
package sse
