package telemetry

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// Span names. The three spans the GenAI semantic conventions define are named as they say:
// the agent run is "invoke_agent rein", a provider request "chat {gen_ai.request.model}" (see
// [ChatSpan]) and a tool call "execute_tool {gen_ai.tool.name}" (see [ToolSpan]); rein's own
// spans keep the rein. prefix.
const (
	SpanRun          = OpInvokeAgent + " " + AgentName
	SpanTurn         = "rein.turn"
	SpanStep         = "rein.step"
	SpanCheckpoint   = "rein.checkpoint"
	SpanSessionWrite = "rein.session.write"

	// EventRetry is the span event of a failed provider attempt that is retried.
	EventRetry = "rein.ai.retry"
)

// Attribute keys of the OpenTelemetry GenAI semantic conventions, defined here as our own
// constants (the conventions are still in development; the names are pinned by a test).
const (
	GenAIOperationName        = "gen_ai.operation.name"
	GenAIProviderName         = "gen_ai.provider.name"
	GenAIConversationID       = "gen_ai.conversation.id"
	GenAIRequestModel         = "gen_ai.request.model"
	GenAIRequestMaxTokens     = "gen_ai.request.max_tokens"
	GenAIResponseModel        = "gen_ai.response.model"
	GenAIResponseID           = "gen_ai.response.id"
	GenAIResponseFinishReason = "gen_ai.response.finish_reasons"
	// GenAIUsageInputTokens counts every input token, cached ones included, as the conventions
	// define it; the cache parts are broken out below.
	GenAIUsageInputTokens      = "gen_ai.usage.input_tokens"
	GenAIUsageOutputTokens     = "gen_ai.usage.output_tokens"
	GenAIUsageCacheReadTokens  = "gen_ai.usage.cache_read.input_tokens"
	GenAIUsageCacheWriteTokens = "gen_ai.usage.cache_creation.input_tokens"
	GenAIToolName              = "gen_ai.tool.name"
	GenAIToolCallID            = "gen_ai.tool.call.id"
	GenAIToolType              = "gen_ai.tool.type"
	GenAIAgentName             = "gen_ai.agent.name"
	ErrorType                  = "error.type"
	HTTPResponseStatusCode     = "http.response.status_code"
	ServerAddress              = "server.address"
	ServerPort                 = "server.port"
)

// GenAI operation names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)

// AgentName is gen_ai.agent.name of the invoke_agent span.
const AgentName = "rein"

// ChatSpan is the name of the span of a request to model: "chat {model}", or "chat" when the
// model id does not look like one.
func ChatSpan(model string) string { return opSpan(OpChat, model) }

// ToolSpan is the name of the span of a call to tool: "execute_tool {tool}"; a tool the agent
// does not offer is "other".
func ToolSpan(tool string) string { return opSpan(OpExecuteTool, tool) }

func opSpan(op, id string) string {
	if id = safeID(id); id == "invalid" {
		return op
	}
	return op + " " + id
}

// rein's own attribute keys.
const (
	AttrSessionID        = "rein.session.id"
	AttrRunStatus        = "rein.run.status"
	AttrRunTurns         = "rein.run.turns"
	AttrTurn             = "rein.turn.index"
	AttrTurnToolCalls    = "rein.turn.tool_calls"
	AttrTurnStopReason   = "rein.turn.stop_reason"
	AttrStepKind         = "rein.step.kind"
	AttrStepAttempt      = "rein.step.attempt"
	AttrStepOutcome      = "rein.step.outcome"
	AttrIntentID         = "rein.intent.id"
	AttrEntryID          = "rein.entry.id"
	AttrToolReplay       = "rein.tool.replay"
	AttrToolOutcome      = "rein.tool.outcome"
	AttrToolIsError      = "rein.tool.is_error"
	AttrToolIndex        = "rein.tool.index"
	AttrCheckpointKind   = "rein.checkpoint.kind"
	AttrTokensBefore     = "rein.compaction.tokens_before"
	AttrCostUSD          = "rein.usage.cost_usd"
	AttrTimeToFirstChunk = "rein.ai.time_to_first_chunk_ms"
	AttrRetryCount       = "rein.ai.retry_count"
	AttrChunkCount       = "rein.ai.chunk_count"
	AttrRetryAttempt     = "rein.ai.retry.attempt"
	AttrRetryDelay       = "rein.ai.retry.delay_ms"
	AttrWriteKind        = "rein.session.record_kind"
	AttrWriteItems       = "rein.session.item_count"
	AttrSeq              = "rein.session.seq"
)

// Values of the enumerated attributes.
const (
	StepModelCall  = "model_call"
	StepToolCall   = "tool_call"
	StepCompaction = "compaction"

	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeAborted   = "aborted"
	OutcomeOverflow  = "overflow"
	// OutcomeUnsettled: the run ended (a recording failure) before the step was settled.
	OutcomeUnsettled = "unsettled"

	ToolCompleted = "completed"
	ToolError     = "error"
	// ErrTool is error.type of a tool call that ran and returned an error result; a call whose
	// result was decided without running it has error.type not_run.
	ErrTool = "tool_error"
	// ToolNotRun: the call got its result without running (unknown tool, invalid arguments,
	// refused, cut by the output limit, or aborted before it started).
	ToolNotRun = "not_run"

	CheckpointTurnEnd    = "turn_end"
	CheckpointCompaction = "compaction"

	WriteIntent = "intent"
	WriteEntry  = "entry"
	WriteClosed = "closed"

	// Other stands for a value outside an attribute's enumeration.
	Other = "other"
)

// attr is one span attribute. Every exported attribute is made by one of the constructors
// below, each of which takes an id, a count, an amount of money, or a value of a closed
// enumeration — never free text — so that a prompt, an argument, a tool output, an error
// message, a header or a key cannot reach an exporter by mistake: there is no way to write
// one. The canary test checks the result.
type attr struct{ kv Attr }

func count(key string, n int) attr           { return attr{Attr{key, intValue(int64(n))}} }
func flag(key string, b bool) attr           { return attr{Attr{key, boolValue(b)}} }
func money(key string, usd float64) attr     { return attr{Attr{key, floatValue(usd)}} }
func ident(key, id string) attr              { return attr{Attr{key, stringValue(safeID(id))}} }
func enum(key, v string, set ...string) attr { return attr{Attr{key, stringValue(oneOf(v, set...))}} }

// constant is for values fixed in this package.
func constant(key, v string) attr { return attr{Attr{key, stringValue(v)}} }

// safeID passes an identifier through when it looks like one — at most 128 characters of
// letters, digits and . _ - : / @ + — and replaces anything else with "invalid". Ids are
// generated by rein or a provider (entry, intent and response ids, tool-call ids) or chosen
// in configuration (model and session ids).
func safeID(s string) string {
	if s == "" || len(s) > 128 {
		return "invalid"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:/@+", c) >= 0 {
			continue
		}
		return "invalid"
	}
	return s
}

func oneOf(v string, set ...string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return Other
}

var (
	stopReasons = []string{string(llm.StopEnd), string(llm.StopLength), string(llm.StopToolUse), string(llm.StopError), string(llm.StopAborted)}
	errorKinds  = []string{string(llm.KindRateLimit), string(llm.KindOverloaded), string(llm.KindServer), string(llm.KindNetwork),
		string(llm.KindAuth), string(llm.KindInvalid), string(llm.KindSpendLimit), string(llm.KindContext), string(llm.KindProtocol),
		string(llm.KindAborted), string(llm.KindUnavailable), string(llm.KindTimeout), string(llm.KindIncompleteStream)}
	runStatuses = []string{string(kernel.StatusCompleted), string(kernel.StatusFailed), string(kernel.StatusBudget),
		string(kernel.StatusAborted), string(kernel.StatusBlocked)}
	providers = []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat, llm.ProviderScript}
	replays   = []string{string(tool.ReplayNever), string(tool.ReplaySafe)}
)

func stopReason(key string, r llm.StopReason) attr { return enum(key, string(r), stopReasons...) }
func errorKind(k llm.ErrorKind) attr               { return enum(ErrorType, string(k), errorKinds...) }

// finishReasons are the finish reasons providers send, as the GenAI conventions want them:
// Anthropic's stop_reason, Chat Completions' finish_reason (OpenAI and the servers that speak
// it), and for the OpenAI Responses API its status or, when incomplete, the reason.
var finishReasons = []string{
	"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded",
	"stop", "length", "tool_calls", "content_filter", "function_call",
	"completed", "max_output_tokens",
}

// finishReason is the GenAI finish_reasons attribute of msg: the provider's own reason (a value
// outside the list above is "other"), or rein's stop reason for a model that reports none
// (the script model).
func finishReason(msg *llm.Message) attr {
	r := oneOf(string(msg.StopReason), stopReasons...)
	if msg.FinishReason != "" {
		r = oneOf(msg.FinishReason, finishReasons...)
	}
	return attr{Attr{GenAIResponseFinishReason, stringsValue([]string{r})}}
}

// usage is the token counts and cost of u.
func usage(u llm.Usage) []attr {
	return []attr{
		count(GenAIUsageInputTokens, u.Input+u.CacheRead+u.CacheWrite),
		count(GenAIUsageOutputTokens, u.Output),
		count(GenAIUsageCacheReadTokens, u.CacheRead),
		count(GenAIUsageCacheWriteTokens, u.CacheWrite),
		money(AttrCostUSD, u.Cost.Total),
	}
}

// defaultBaseURL is where provider's adapter sends requests when no base URL is set (a
// switch, not a map: nothing to build at package load).
func defaultBaseURL(provider string) string {
	switch provider {
	case llm.ProviderAnthropic:
		return "https://api.anthropic.com"
	case llm.ProviderOpenAI:
		return "https://api.openai.com/v1"
	}
	return ""
}

// server is server.address and server.port of the provider endpoint baseURL (or the
// provider's default): the host and the port only, never credentials, path or query. None
// when the endpoint is unknown (the script model) or not a URL.
func server(provider, baseURL string) []attr {
	if baseURL == "" {
		baseURL = defaultBaseURL(provider)
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		}
	}
	a := []attr{ident(ServerAddress, u.Hostname())}
	if port > 0 && port < 1<<16 {
		a = append(a, count(ServerPort, port))
	}
	return a
}
