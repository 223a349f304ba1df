// Package llmtest is the conformance suite every [llm.Model] adapter must pass.
//
// An adapter's test supplies a [Harness]: a constructor pointed at a test server and, for each
// named case, the HTTP responses the real provider would send (its real SSE wire format). The
// suite serves those responses from an httptest server, streams through the adapter, and
// checks the provider-neutral outcome, which is the same for every adapter: the expectations
// are the constants and the per-case documentation below, so a fixture author knows exactly
// what to encode.
//
// Completeness is part of the contract: a response that does not reach its wire format's
// terminal event (cut, ended early, silent past the idle timeout, headers never sent) must be
// a retryable failure, and a retry must keep only the complete answer. Every harness builds
// its model with the timeouts the suite asks for.
package llmtest
