package llm

import (
	"fmt"
	"strings"
	"time"
)

// ProviderError is a provider's error answer in its structured form: what an adapter read from
// the HTTP status and the error object of the body (or of an error event inside a stream).
type ProviderError struct {
	// Status is the HTTP status, or 0 for an error reported inside a 200 stream.
	Status int
	// Type and Code are the error object's machine-readable fields: Anthropic's error.type and
	// error.details.error_code, OpenAI's error.type and error.code. Empty when absent.
	Type, Code string
	// Message is the text shown to the user: the error's message (with its type and code, as
	// the adapter renders them), or the raw body when it is not the provider's JSON shape.
	Message string
	// RetryAfter is the wait the server asked for, or 0.
	RetryAfter time.Duration
}

// Classify types p. The structured fields decide first: a known code, then a known type, then
// the HTTP status. The message text is read only where those say nothing, or say only
// something generic that the text makes precise: a 400 or an invalid_request_error whose text
// says the prompt did not fit (context) or the account has no credit (spend limit), a 429
// whose text says the quota is used up (spend limit), a server error whose text says
// overloaded. An error inside a stream with no known type or code is classified from its text,
// and is a retryable server error when the text says nothing recognisable: the request itself
// was accepted. Rate limits, overload and server errors are retryable; spend limits, context
// overflow, auth and invalid requests are not.
func (p ProviderError) Classify() *Error {
	e := &Error{Status: p.Status, Message: strings.TrimSpace(p.Message), RetryAfterMs: p.RetryAfter.Milliseconds()}
	e.Kind = p.kind()
	e.Retryable = e.Kind == KindRateLimit || e.Kind == KindOverloaded || e.Kind == KindServer
	if e.Message == "" {
		e.Message = fmt.Sprintf("HTTP status %d with no body", p.Status)
		if p.Status == 0 {
			e.Message = "the server reported an error mid-stream"
		}
	}
	return e
}

func (p ProviderError) kind() ErrorKind {
	if k, ok := codeKind(strings.ToLower(p.Code)); ok {
		return k
	}
	text := strings.ToLower(p.Message + " " + p.Type + " " + p.Code)
	typ := strings.ToLower(p.Type)
	if k, ok := typeKind(typ); ok {
		return k
	}
	if k, ok := genericTypeKind(typ); ok {
		return refine(k, text)
	}
	if p.Status != 0 {
		return refine(statusKind(p.Status), text)
	}
	return streamTextKind(text)
}

// codeKind classifies the error codes providers document (OpenAI's error.code, Anthropic's
// error.details.error_code). A code names the cause; it is never refined by the text. (The
// tables here are switches: a map literal would be built at every start, by a package
// initializer.)
func codeKind(code string) (ErrorKind, bool) {
	switch code {
	// Credit, quota and spend limits: terminal until someone pays or raises the limit.
	case "insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
		"credit_balance_exhausted", "contract_spend_limit_reached", "enforced_spend_limit_reached",
		"linked_organization_spend_limit_reached", "linked_organization_billing_unavailable":
		return KindSpendLimit, true
	case "rate_limit_exceeded", "ramp_limit_exceeded", "slow_down":
		return KindRateLimit, true
	case "server_is_overloaded":
		return KindOverloaded, true
	case "server_error", "vector_store_timeout":
		return KindServer, true
	case "context_length_exceeded":
		return KindContext, true
	case "invalid_api_key":
		return KindAuth, true
	case "model_not_found", "invalid_prompt", "data_residency_mismatch", "bio_policy",
		"misalignment_policy_violation", "invalid_image", "invalid_image_format", "invalid_base64_image",
		"invalid_image_url", "image_too_large", "image_too_small", "image_parse_error",
		"image_content_policy_violation", "invalid_image_mode", "image_file_too_large",
		"unsupported_image_media_type", "empty_image_file", "failed_to_download_image",
		"image_file_not_found", "image_dimensions_too_large":
		return KindInvalid, true
	}
	return "", false
}

// typeKind classifies the error types that name a cause (Anthropic's error.type, and OpenAI's
// where it is specific). The text does not refine them; request_too_large is KindContext, as
// compacting the request is the remedy.
func typeKind(typ string) (ErrorKind, bool) {
	switch typ {
	case "overloaded_error":
		return KindOverloaded, true
	case "rate_limit_error":
		return KindRateLimit, true
	case "authentication_error", "permission_error":
		return KindAuth, true
	case "billing_error", "insufficient_quota":
		return KindSpendLimit, true
	case "not_found_error":
		return KindInvalid, true
	case "request_too_large":
		return KindContext, true
	case "timeout_error":
		return KindServer, true
	}
	return "", false
}

// genericTypeKind classifies error types that say only "your request" or "our side": the text
// may make them precise (see [refine]).
func genericTypeKind(typ string) (ErrorKind, bool) {
	switch typ {
	case "invalid_request_error":
		return KindInvalid, true
	case "api_error", "server_error", "service_unavailable_error":
		return KindServer, true
	}
	return "", false
}

// statusKind classifies an HTTP status on its own.
func statusKind(status int) ErrorKind {
	switch {
	case status == 401 || status == 403:
		return KindAuth
	case status == 402:
		return KindSpendLimit
	case status == 429:
		return KindRateLimit
	case status == 529:
		return KindOverloaded
	case status == 408 || status == 409 || status >= 500:
		return KindServer
	default:
		return KindInvalid
	}
}

// refine makes a generic kind precise from the message text: an invalid request that is a
// context overflow or a spend limit, a 429 that is a spent quota, a server error that is an
// overload.
func refine(k ErrorKind, text string) ErrorKind {
	switch {
	case (k == KindInvalid || k == KindRateLimit) && saysSpendLimit(text):
		return KindSpendLimit
	case k == KindInvalid && IsContextOverflow(text):
		return KindContext
	case k == KindServer && containsAny(text, "overloaded"):
		return KindOverloaded
	}
	return k
}

// streamTextKind classifies an error inside a stream that has no known type or code.
func streamTextKind(text string) ErrorKind {
	switch {
	case saysSpendLimit(text):
		return KindSpendLimit
	case IsContextOverflow(text):
		return KindContext
	case containsAny(text, "rate_limit", "rate limit", "too many requests"):
		return KindRateLimit
	case containsAny(text, "overloaded", "overload", "capacity"):
		return KindOverloaded
	case containsAny(text, "server_error", "internal", "unavailable", "timeout", "timed out", "try again"):
		return KindServer
	case containsAny(text, "invalid", "not_found", "not found", "unsupported", "content_filter", "content filter",
		"policy", "authentication", "permission", "unauthorized", "forbidden"):
		return KindInvalid
	default:
		return KindServer
	}
}

func saysSpendLimit(text string) bool {
	return containsAny(text, "insufficient_quota", "billing", "credit balance", "spend limit", "exceeded your current quota")
}

func containsAny(text string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}
