package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

// traceUsage is the help text of --trace.
const traceUsage = "export OpenTelemetry spans: otlp (OTLP/HTTP, http/protobuf by default or http/json, configured by OTEL_EXPORTER_OTLP_*), stdout (one JSON object per span, written to stderr) or file:PATH (JSON spans appended to PATH); off by default"

// checkTrace validates a --trace value.
func checkTrace(spec string) error {
	if err := telemetry.CheckExporter(spec); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return nil
}

// startTracer starts the exporter --trace names (nil when tracing is off) and returns the
// function that flushes it before rein exits. A failed export is reported on stderr and does
// not change the exit code: traces are a side channel, the run's outcome is in the session.
func startTracer(e *env, spec string) (*telemetry.Tracer, func(), error) {
	cfg := telemetry.Config{Exporter: spec, Stderr: e.stderr, Getenv: e.getenv}
	if spec != telemetry.ExportOff {
		cfg.Version = version() // only an exporter sends it (reading it parses the build information)
	}
	t, err := telemetry.New(e.ctx, cfg)
	if errors.Is(err, telemetry.ErrConfig) {
		return nil, nil, fmt.Errorf("%w: %w", system.ErrConfig, err)
	}
	if err != nil {
		return nil, nil, err
	}
	flush := func() {
		// An interrupted run still flushes what it traced.
		if err := t.Shutdown(context.WithoutCancel(e.ctx)); err != nil {
			fmt.Fprintf(e.stderr, "rein: %v\n", err)
		}
	}
	return t, flush, nil
}
