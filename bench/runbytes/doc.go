// Package runbytes measures what a delivery run sends to its models: it plays a delivery
// run's script-model scenarios through an OpenAI-compatible mock (package bench/mock), so
// that rein's real openai-compat adapter encodes and sends every request of every stage
// session over HTTP, captures each body, and computes from them
//
//   - per stage session: the first request's bytes, split into the fixed part (the system
//     message and the tool schemas, as sent), the pack (the first user message's text: the
//     stage's rendered inputs) and the JSON framing around them;
//   - the run's total: the bytes of every request of every session;
//   - the one-session equivalent: what a single session carrying the whole history would
//     send, each request being the final transcripts of all earlier sessions plus this
//     request (so its history grows across the stages instead of starting fresh), and the
//     ratio of the two.
//
// The measuring test is TestDeliveryRunBytes; with -runbytes.out FILE it writes the figures
// as JSON for bench/compare.sh's report.
package runbytes
