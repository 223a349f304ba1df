// Package redact keeps credentials and oversized bodies out of what a model reports about its
// failures. [Errors] wraps an [llm.Model] (the provider adapter, inside [llm.Retry]) so that
// every error text the adapter produces — the Err of the failed message it returns and of
// every event it emits — has passed a [Redactor] before anything downstream (the retry
// decorator, the agent loop, the session ledger, stderr, the JSON result record, RPC, exports,
// spans) sees it. The composition root wraps every adapter it builds with the key in use.
//
// # What a Redactor removes
//
//   - each key it was given, exactly: anywhere for a key of 8 or more bytes; for a shorter key
//     wherever it stands as a token of its own (not inside a longer run of letters and digits),
//     so that a one-letter test key does not garble every word;
//   - the partially masked forms providers echo ("sk-proj-****…abcd", "sk-...wxyz",
//     "sk-abc1•••wxyz"): around every mask run (asterisks, bullets, "…" or three or more dots)
//     the longest prefix of a key that ends at the run and the longest suffix of a key that
//     starts after it; the run and both fragments are replaced when either fragment is at
//     least 4 bytes long. Keys shorter than 8 bytes are not matched by fragment (too many false
//     positives);
//   - the values of Authorization, Proxy-Authorization, x-api-key, api-key and x-goog-api-key
//     headers quoted in the text ("Authorization: Bearer …", "x-api-key=…", a printed Go
//     header map), whatever the key in use;
//   - everything the secret scanner (package secret) finds.
//
// Then it bounds the text: an HTML page (a proxy's or a load balancer's error page) is reduced
// to its title (or first heading) and size, and any text longer than [MaxText] bytes is cut
// there with a marker saying how much was left out. Secrets are removed before anything is
// cut, so a cut never leaves part of a key behind.
//
// Markers: "[REDACTED:api-key]" for a key in any form, "[REDACTED:auth-header]" for a header
// value, "[REDACTED:rule-id]" for a scanner finding.
//
// # Contract
//
// [Errors] changes nothing but error texts (llm.Error.Message); it never mutates the adapter's
// values (it hands on scrubbed copies), and the message it returns is the very message of the
// final event it emits, as the [llm.Model] contract requires. [Redactor.Text] is idempotent.
package redact
