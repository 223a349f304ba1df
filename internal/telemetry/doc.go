// Package telemetry traces agent runs as OpenTelemetry spans and totals their cost from
// session ledgers.
//
// # Spans
//
// An [Instrument] watches one agent from the outside — as an observer of the kernel's event
// stream, a decorator of its model and a decorator of its recorder — and never changes what
// the agent does. It makes these spans; the three the OpenTelemetry GenAI semantic
// conventions define are named as they say, rein's own keep the rein. prefix:
//
//	invoke_agent rein            one Run or Continue (agent_start → agent_end)
//	├─ rein.session.write        the prompt's entry
//	└─ rein.turn                 one turn (turn_start → turn_end)
//	   ├─ rein.checkpoint        kind=compaction: a compaction, around its step
//	   │  └─ rein.step           kind=compaction
//	   │     ├─ rein.session.write
//	   │     └─ chat {model}     the summarization request(s)
//	   ├─ rein.step              kind=model_call: intent → settlement, one durable attempt
//	   │  ├─ rein.session.write  the intent, then the settlement
//	   │  └─ chat {model}        one logical provider request, retries included
//	   ├─ execute_tool {tool}    one tool call (tool_start → tool_end), run or not
//	   │  └─ rein.step           kind=tool_call: intent → settlement, if the call ran
//	   │     └─ rein.session.write
//	   ├─ rein.session.write     results decided without running (refused, invalid, …)
//	   └─ rein.checkpoint        kind=turn_end: the turn is durable up to rein.session.seq
//
// A manual compaction (outside a run) is a root rein.checkpoint. Spans still open when a run
// ends early (a recording failure) are ended with outcome "unsettled". Every failed span has
// status Error and an error.type, both an enumerated value: an error kind (rate_limit, auth,
// …), a stop reason, a run status, a step outcome, or for a tool call tool_error (it ran and
// returned an error result) or not_run (its result was decided without running it).
//
// # What attributes may carry
//
// Ids (session, intent, entry, tool call, provider response), the provider endpoint's host and
// port (never its credentials, path or query), counts (tokens, turns, chunks, retries, ledger
// seqs), money (cost in US dollars), durations, and values of closed enumerations (stop
// reasons, the providers' finish reasons, error kinds, outcomes, offered tool names). A span
// name is a constant, or an operation and a model id or offered tool name checked the same
// way. Never a prompt, a
// message, tool arguments or output, an error message, a file path from a tool, a header or a
// key. This holds by construction: every attribute is made by a constructor in attr.go that
// accepts only those kinds of values (an id must look like one; an enumeration value outside
// its set becomes "other"; a tool name the model made up becomes "other"), span status
// descriptions are enumerated values, errors are never recorded as span events, and the
// resource carries no process or host attributes (a command line holds the prompt). A canary
// test exports every span of a run whose prompt, arguments and outputs hold secret-looking
// strings and checks that none leaves.
//
// # The span pipeline
//
// rein makes its spans itself, with no OpenTelemetry SDK, so that no SDK package initializer
// runs at start-up with tracing off (span.go, sampler.go, batch.go, resource.go). A span gets
// random W3C-sized ids (16-byte trace, 8-byte span; unique, not secret) and its parent's
// trace; what it records is kept on the span until it ends, when its [SpanRecord] goes to the
// processor: the exporter itself for [Config.Export] (synchronously), else a batch processor
// with the specification's OTEL_BSP_* settings and defaults, which drops (and counts) spans
// when its queue is full. The sampler is OTEL_TRACES_SAMPLER's (default
// parentbased_always_on); an unsampled span records nothing but still parents its children.
// The resource is service.name, service.version and telemetry.sdk.{name=rein,language=go,
// version}, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME. A value of these variables
// that cannot be used is warned about on Config.Stderr and the default holds.
//
// # Exporters
//
// An [Exporter] is rein's own small interface over [SpanRecord]. [New] builds one: OTLP/HTTP
// (otlp.go, configured by the standard OTEL_EXPORTER_OTLP_* variables) in the protobuf
// encoding, the default the specification asks for, or the JSON one; both are written by
// rein's own encoders (otlpenc.go, otlpproto.go) over one model of the request, so that the
// binary links neither the protobuf runtime nor gRPC (grpc is refused with a message saying
// what to set instead). Or one JSON object per span in the OpenTelemetry Go stdout exporter's
// shape (stdout.go; written to standard error, so rein's own output stays clean), or a file of
// them. Tracing is off unless asked for; a nil [*Tracer] and a nil [*Instrument] pass
// everything through. [Tracer.Shutdown] flushes. rein links no OpenTelemetry API, so there is
// no global tracer provider for a library to trace through.
//
// # Costs
//
// The session ledger is the cost ledger: [Costs] totals the usage of the assistant messages
// each session's model calls recorded (entries a fork copied from its parent are not counted
// again), by model, day or project.
package telemetry
