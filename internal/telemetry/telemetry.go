package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ErrConfig says the trace configuration cannot be used.
var ErrConfig = errors.New("trace configuration")

// Exporter names, as --trace takes them.
const (
	ExportOff    = ""
	ExportOTLP   = "otlp"
	ExportStdout = "stdout"
	// ExportFile is the prefix of "file:PATH".
	ExportFile = "file:"
)

// CheckExporter reports whether spec names an exporter: "", "otlp", "stdout" or "file:PATH".
func CheckExporter(spec string) error {
	switch {
	case spec == ExportOff, spec == ExportOTLP, spec == ExportStdout:
		return nil
	case strings.HasPrefix(spec, ExportFile) && len(spec) > len(ExportFile):
		return nil
	}
	return fmt.Errorf("%w: --trace %q: want otlp, stdout or file:PATH", ErrConfig, spec)
}

// Config says where spans go.
type Config struct {
	// Exporter is "" (off), "otlp", "stdout" or "file:PATH". Ignored when Export is set.
	Exporter string
	// Export, if set, receives every span synchronously as it ends (tests, embedders).
	Export sdktrace.SpanExporter
	// Stderr is where the stdout exporter writes (rein's own standard output is reserved for
	// its answers and events); nil means os.Stderr.
	Stderr io.Writer
	// Getenv reads the standard OTEL_EXPORTER_OTLP_* variables that configure the OTLP
	// exporter (endpoint, headers, timeout, compression, certificates; a protocol other than
	// http/json is refused); nil means os.Getenv.
	Getenv func(string) string
	// Version is rein's version, exported as service.version.
	Version string
}

// Tracer owns the tracer provider and its exporter. A nil *Tracer is valid and traces nothing.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tr     trace.Tracer
	exp    *reporting
	closer io.Closer // the trace file, if any
}

// reporting keeps the export failures of an exporter for Shutdown to report, instead of
// handing them to the batch processor, which would log each one through OpenTelemetry's
// global error handler in the middle of rein's output.
type reporting struct {
	sdktrace.SpanExporter
	mu            sync.Mutex
	calls, failed int
	first         error
}

func (r *reporting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if err != nil {
		r.failed++
		if r.first == nil {
			r.first = err
		}
	}
	return nil
}

func (r *reporting) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		return nil
	}
	return fmt.Errorf("%d of %d exports failed, the first with: %w", r.failed, r.calls, r.first)
}

// New starts tracing as cfg says; with no exporter configured it returns a nil *Tracer, whose
// instrumentation passes everything through untouched. rein never installs a global tracer
// provider, so libraries that trace through the global one (the provider SDKs) stay silent.
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	if cfg.Export == nil && cfg.Exporter == ExportOff {
		return nil, nil
	}
	if err := CheckExporter(cfg.Exporter); err != nil {
		return nil, err
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := &Tracer{}
	var opt sdktrace.TracerProviderOption
	switch {
	case cfg.Export != nil:
		t.exp = &reporting{SpanExporter: cfg.Export}
		opt = sdktrace.WithSyncer(t.exp)
	case cfg.Exporter == ExportOTLP:
		exp, err := newOTLPExporter(getenv)
		if err != nil {
			return nil, err
		}
		t.exp = &reporting{SpanExporter: exp}
		opt = sdktrace.WithBatcher(t.exp)
	case cfg.Exporter == ExportStdout:
		w := cfg.Stderr
		if w == nil {
			w = os.Stderr
		}
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, fmt.Errorf("%w: stdout: %w", ErrConfig, err)
		}
		t.exp = &reporting{SpanExporter: exp}
		opt = sdktrace.WithBatcher(t.exp)
	default: // file:PATH
		path := strings.TrimPrefix(cfg.Exporter, ExportFile)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%w: trace file: %w", ErrConfig, err)
		}
		exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: file: %w", ErrConfig, err)
		}
		t.closer = f
		t.exp = &reporting{SpanExporter: exp}
		opt = sdktrace.WithBatcher(t.exp)
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	// The resource names the service and the SDK, plus what OTEL_RESOURCE_ATTRIBUTES and
	// OTEL_SERVICE_NAME say. Process and host detectors are left out on purpose: a process's
	// command line holds the prompt.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "rein"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		res = resource.Empty()
	}
	t.tp = sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res))
	t.tr = t.tp.Tracer("github.com/reinhq/rein/internal/telemetry", trace.WithInstrumentationVersion(version))
	return t, nil
}

// ShutdownTimeout bounds the final flush of Shutdown.
const ShutdownTimeout = 10 * time.Second

// Shutdown ends any span still open, exports what is buffered and closes the exporter. Call
// it once, before the process exits; an export failure is returned and does not affect
// anything else.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	err := errors.Join(t.tp.Shutdown(ctx), t.exp.err())
	if t.closer != nil {
		err = errors.Join(err, t.closer.Close())
	}
	if err != nil {
		return fmt.Errorf("exporting traces: %w", err)
	}
	return nil
}
