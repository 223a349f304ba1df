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
	Export Exporter
	// Stderr is where the stdout exporter writes (rein's own standard output is reserved for
	// its answers and events), and where warnings about ignored OTEL_* values go; nil means
	// os.Stderr.
	Stderr io.Writer
	// Getenv reads the standard variables: OTEL_EXPORTER_OTLP_* configure the OTLP exporter
	// (endpoint, headers, timeout, compression, certificates; grpc is refused),
	// OTEL_TRACES_SAMPLER(_ARG) the sampler, OTEL_BSP_* the batch processor,
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES the resource; nil means os.Getenv.
	Getenv func(string) string
	// Version is rein's version, exported as service.version.
	Version string
}

// Tracer makes spans and hands each, as it ends, to its processor: the exporter itself for
// Config.Export, else a batch processor in front of it. A nil *Tracer is valid and traces
// nothing.
type Tracer struct {
	sampler  sampler
	resource *Resource
	scope    Scope
	proc     processor
	exp      *reporting
	closer   io.Closer // the trace file, if any
}

// reporting keeps the export failures of an exporter for Shutdown to report, instead of
// letting them be written in the middle of rein's output.
type reporting struct {
	Exporter
	mu            sync.Mutex
	calls, failed int
	first         error
}

func (r *reporting) ExportSpans(ctx context.Context, spans []*SpanRecord) error {
	err := r.Exporter.ExportSpans(ctx, spans)
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
// instrumentation passes everything through untouched. rein links no OpenTelemetry API, so
// there is no global tracer provider for a library to trace through.
func New(_ context.Context, cfg Config) (*Tracer, error) {
	if cfg.Export == nil && cfg.Exporter == ExportOff {
		return nil, nil
	}
	if err := CheckExporter(cfg.Exporter); err != nil {
		return nil, err
	}
	getenv, stderr := cfg.Getenv, cfg.Stderr
	if getenv == nil {
		getenv = os.Getenv
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	t := &Tracer{}
	var exp Exporter
	switch {
	case cfg.Export != nil:
		exp = cfg.Export
	case cfg.Exporter == ExportOTLP:
		e, err := newOTLPExporter(getenv)
		if err != nil {
			return nil, err
		}
		exp = e
	case cfg.Exporter == ExportStdout:
		exp = newStdoutExporter(stderr)
	default: // file:PATH
		path := strings.TrimPrefix(cfg.Exporter, ExportFile)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%w: trace file: %w", ErrConfig, err)
		}
		t.closer = f
		exp = newStdoutExporter(f)
	}
	t.exp = &reporting{Exporter: exp}
	if cfg.Export != nil {
		t.proc = &syncer{exp: t.exp}
	} else {
		t.proc = newBatcher(t.exp, batchConfigFromEnv(getenv))
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "rein: %s\n", msg) }
	t.sampler = samplerFromEnv(getenv, warn)
	t.resource = newResource(version, getenv, warn)
	t.scope = Scope{Name: "github.com/reinhq/rein/internal/telemetry", Version: version}
	return t, nil
}

// ShutdownTimeout bounds the final flush of Shutdown.
const ShutdownTimeout = 10 * time.Second

// Shutdown exports what is buffered and closes the exporter; a span that ends later is not
// exported. Call it once, before the process exits; an export failure (or spans the full
// queue dropped) is returned and does not affect anything else.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	err := errors.Join(t.proc.shutdown(ctx), t.exp.err())
	if t.closer != nil {
		err = errors.Join(err, t.closer.Close())
	}
	if err != nil {
		return fmt.Errorf("exporting traces: %w", err)
	}
	return nil
}
