package telemetry

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Sampler names, as OTEL_TRACES_SAMPLER takes them (case and surrounding spaces ignored).
const (
	SamplerAlwaysOn                = "always_on"
	SamplerAlwaysOff               = "always_off"
	SamplerTraceIDRatio            = "traceidratio"
	SamplerParentBasedAlwaysOn     = "parentbased_always_on"
	SamplerParentBasedAlwaysOff    = "parentbased_always_off"
	SamplerParentBasedTraceIDRatio = "parentbased_traceidratio"
)

// sampler decides which traces are recorded: a root span by its trace id, a child span as its
// parent was when parentBased, else as a root (which, the trace id being the parent's, comes
// to the same for every sampler here).
type sampler struct {
	ratio       float64 // 1 records every trace, 0 none
	parentBased bool
}

func (s sampler) sample(parent *span, id TraceID) bool {
	if parent != nil && s.parentBased {
		return parent.sampled
	}
	switch {
	case s.ratio >= 1:
		return true
	case s.ratio <= 0:
		return false
	}
	// The trace id's low 63 bits (random) against the ratio's share of 2^63.
	return binary.BigEndian.Uint64(id[8:])>>1 < uint64(s.ratio*(1<<63))
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. An unknown sampler
// falls back to the default, parentbased_always_on, and a ratio that is not a number from 0 to
// 1 to 1, each with a warning.
func samplerFromEnv(getenv func(string) string, warn func(string)) sampler {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	ratio := func() float64 {
		arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
		if arg == "" {
			return 1
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			warn(fmt.Sprintf("OTEL_TRACES_SAMPLER_ARG=%s: want a ratio from 0 to 1; sampling every trace", arg))
			return 1
		}
		return r
	}
	switch name {
	case "", SamplerParentBasedAlwaysOn:
		return sampler{ratio: 1, parentBased: true}
	case SamplerAlwaysOn:
		return sampler{ratio: 1}
	case SamplerAlwaysOff:
		return sampler{ratio: 0}
	case SamplerParentBasedAlwaysOff:
		return sampler{ratio: 0, parentBased: true}
	case SamplerTraceIDRatio:
		return sampler{ratio: ratio()}
	case SamplerParentBasedTraceIDRatio:
		return sampler{ratio: ratio(), parentBased: true}
	}
	warn(fmt.Sprintf("OTEL_TRACES_SAMPLER=%s: unsupported sampler (want %s, %s, %s, %s, %s or %s); using %s", name,
		SamplerAlwaysOn, SamplerAlwaysOff, SamplerTraceIDRatio, SamplerParentBasedAlwaysOn, SamplerParentBasedAlwaysOff,
		SamplerParentBasedTraceIDRatio, SamplerParentBasedAlwaysOn))
	return sampler{ratio: 1, parentBased: true}
}
