package telemetry

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// processor takes each span as it ends.
type processor interface {
	onEnd(*SpanRecord)
	// shutdown exports what is left and shuts the exporter down, within ctx.
	shutdown(ctx context.Context) error
}

// syncer exports each span as it ends, on the goroutine that ended it, one export at a time.
type syncer struct {
	mu   sync.Mutex
	exp  Exporter
	done bool
}

func (s *syncer) onEnd(r *SpanRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.exp.ExportSpans(context.Background(), []*SpanRecord{r})
	}
}

func (s *syncer) shutdown(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	return s.exp.Shutdown(ctx)
}

// Batch processor defaults, the OpenTelemetry specification's.
const (
	DefaultScheduleDelay  = 5000 * time.Millisecond
	DefaultExportTimeout  = 30000 * time.Millisecond
	DefaultMaxQueueSize   = 2048
	DefaultMaxExportBatch = 512
)

// batchConfig is the batch processor's configuration.
type batchConfig struct {
	delay, timeout    time.Duration // timeout 0: no limit
	maxQueue, maxSize int
}

// batchConfigFromEnv reads OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (milliseconds, 0 or
// more), OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE (1 or more; a batch is at
// most the queue). A value that is not such a number is ignored: the default holds.
func batchConfigFromEnv(getenv func(string) string) batchConfig {
	num := func(name string, min, def int) int {
		n, err := strconv.Atoi(strings.TrimSpace(getenv(name)))
		if err != nil || n < min {
			return def
		}
		return n
	}
	c := batchConfig{
		delay:    time.Duration(num("OTEL_BSP_SCHEDULE_DELAY", 0, int(DefaultScheduleDelay/time.Millisecond))) * time.Millisecond,
		timeout:  time.Duration(num("OTEL_BSP_EXPORT_TIMEOUT", 0, int(DefaultExportTimeout/time.Millisecond))) * time.Millisecond,
		maxQueue: num("OTEL_BSP_MAX_QUEUE_SIZE", 1, DefaultMaxQueueSize),
		maxSize:  num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1, DefaultMaxExportBatch),
	}
	c.maxSize = min(c.maxSize, c.maxQueue)
	return c
}

// batcher queues ended spans and exports them from one goroutine in batches of at most
// maxSize: when a batch is full, when delay has passed since the last export, and at
// shutdown. A span that ends while the queue is full is dropped and counted; one that ends
// after shutdown began is ignored.
type batcher struct {
	exp Exporter
	cfg batchConfig

	mu      sync.Mutex
	queue   []*SpanRecord
	dropped int
	closed  bool

	full    chan struct{} // a batch is ready (buffered: one signal is enough)
	stop    chan struct{} // closed by shutdown
	stopped chan struct{} // closed when the goroutine has exported the rest
	ctx     context.Context
	cancel  context.CancelFunc // the final export's context
	wakes   atomic.Int64       // the loop's wake-ups (tests: an idle loop sleeps)
}

func newBatcher(exp Exporter, cfg batchConfig) *batcher {
	b := &batcher{exp: exp, cfg: cfg, full: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	go b.loop()
	return b
}

func (b *batcher) onEnd(r *SpanRecord) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed: // after Shutdown: nothing exports it any more
		return
	case len(b.queue) >= b.cfg.maxQueue:
		b.dropped++
		return
	}
	b.queue = append(b.queue, r)
	if len(b.queue) >= b.cfg.maxSize || b.cfg.delay == 0 { // a delay of 0: export at once
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

func (b *batcher) loop() {
	defer close(b.stopped)
	var tick <-chan time.Time // none with a delay of 0: an ending span signals full
	timer := time.NewTimer(max(b.cfg.delay, time.Millisecond))
	defer timer.Stop()
	if b.cfg.delay > 0 {
		tick = timer.C
	}
	for {
		select {
		case <-b.stop:
			for b.export(b.ctx) {
			}
			return
		case <-b.full:
		case <-tick:
		}
		b.wakes.Add(1)
		for b.export(context.Background()) && (b.ready() || b.cfg.delay == 0) {
		}
		if b.cfg.delay > 0 {
			timer.Reset(b.cfg.delay)
		}
	}
}

// ready reports whether a full batch is queued.
func (b *batcher) ready() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) >= b.cfg.maxSize
}

// export sends the next batch, if any, within the export timeout; it reports whether there
// was one.
func (b *batcher) export(ctx context.Context) bool {
	b.mu.Lock()
	n := min(len(b.queue), b.cfg.maxSize)
	batch := b.queue[:n:n]
	b.queue = b.queue[n:]
	b.mu.Unlock()
	if n == 0 {
		return false
	}
	if b.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.cfg.timeout)
		defer cancel()
	}
	b.exp.ExportSpans(ctx, batch)
	return true
}

// shutdown exports every queued span (the last exports run within ctx), then shuts the
// exporter down. Spans dropped on the way are reported.
func (b *batcher) shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	stop := context.AfterFunc(ctx, b.cancel)
	defer stop()
	close(b.stop)
	var err error
	select {
	case <-b.stopped:
	case <-ctx.Done():
		err = fmt.Errorf("flushing spans: %w", ctx.Err())
	}
	if serr := b.exp.Shutdown(ctx); serr != nil && err == nil {
		err = serr
	}
	b.mu.Lock()
	dropped := b.dropped
	b.mu.Unlock()
	if dropped > 0 {
		drop := fmt.Errorf("%d spans dropped: the export queue (OTEL_BSP_MAX_QUEUE_SIZE, %d) was full", dropped, b.cfg.maxQueue)
		if err == nil {
			return drop
		}
		return fmt.Errorf("%w; %w", err, drop)
	}
	return err
}
