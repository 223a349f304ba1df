package telemetry

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// envOf is a Getenv over kv pairs.
func envOf(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

// batches records what it is given, batch by batch.
type batches struct {
	mu        sync.Mutex
	got       [][]*SpanRecord
	deadlines []time.Duration // time left on each export's context (0: none)
	shutdown  bool
}

func (b *batches) ExportSpans(ctx context.Context, spans []*SpanRecord) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var left time.Duration
	if d, ok := ctx.Deadline(); ok {
		left = max(time.Until(d), time.Nanosecond)
	}
	b.got, b.deadlines = append(b.got, spans), append(b.deadlines, left)
	return nil
}

func (b *batches) Shutdown(context.Context) error {
	b.mu.Lock()
	b.shutdown = true
	b.mu.Unlock()
	return nil
}

func (b *batches) sizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var n []int
	for _, g := range b.got {
		n = append(n, len(g))
	}
	return n
}

// tracer is a Tracer like New's, batching into exp as env says.
func tracer(exp Exporter, stderr *bytes.Buffer, env ...string) *Tracer {
	getenv := envOf(env...)
	warn := func(m string) { stderr.WriteString("rein: " + m + "\n") }
	t := &Tracer{sampler: samplerFromEnv(getenv, warn), resource: newResource("v1", getenv, warn), scope: Scope{Name: "s"}}
	t.exp = &reporting{Exporter: exp}
	t.proc = newBatcher(t.exp, batchConfigFromEnv(getenv))
	return t
}

// spansOf starts and ends n root spans, each with one child.
func spansOf(t *Tracer, n int) {
	for range n {
		root := t.start(nil, "root", KindInternal)
		t.start(root, "child", KindClient).end()
		root.end()
	}
}

func TestSamplers(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want int // spans exported of 20 roots with a child each
		warn string
	}{
		{nil, 40, ""},
		{[]string{"OTEL_TRACES_SAMPLER", " Always_Off "}, 0, ""},
		{[]string{"OTEL_TRACES_SAMPLER", "always_on"}, 40, ""},
		{[]string{"OTEL_TRACES_SAMPLER", "parentbased_always_off"}, 0, ""},
		{[]string{"OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0"}, 0, ""},
		{[]string{"OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "1"}, 40, ""},
		{[]string{"OTEL_TRACES_SAMPLER", "traceidratio"}, 40, ""}, // no argument: 1
		{[]string{"OTEL_TRACES_SAMPLER", "bogus"}, 40, "OTEL_TRACES_SAMPLER=bogus: unsupported sampler"},
		{[]string{"OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "abc"}, 40, "OTEL_TRACES_SAMPLER_ARG=abc: want a ratio from 0 to 1"},
		{[]string{"OTEL_TRACES_SAMPLER", "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG", "-1"}, 40, "OTEL_TRACES_SAMPLER_ARG=-1"},
	} {
		var stderr bytes.Buffer
		exp := &batches{}
		tr := tracer(exp, &stderr, tc.env...)
		spansOf(tr, 20)
		if err := tr.proc.shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range exp.sizes() {
			n += s
		}
		if n != tc.want || !strings.Contains(stderr.String(), tc.warn) || (tc.warn == "") != (stderr.Len() == 0) {
			t.Errorf("%v: %d spans exported, warnings %q; want %d, %q", tc.env, n, stderr.String(), tc.want, tc.warn)
		}
	}
}

// TestRatioSampler checks the ratio against the trace id, and that under a parent-based
// sampler a child follows its parent whatever its own id would say.
func TestRatioSampler(t *testing.T) {
	low, high := TraceID{}, TraceID{}
	for i := range high {
		high[i] = 0xff
	}
	s := sampler{ratio: 0.5}
	if !s.sample(nil, low) || s.sample(nil, high) {
		t.Error("ratio 0.5: want the low trace id sampled and the high one not")
	}
	sampled := 0
	for range 4000 {
		if s.sample(nil, newTraceID()) {
			sampled++
		}
	}
	if sampled < 1700 || sampled > 2300 {
		t.Errorf("ratio 0.5 sampled %d of 4000 random traces", sampled)
	}
	pb := sampler{ratio: 0, parentBased: true}
	if !pb.sample(&span{sampled: true}, high) || pb.sample(&span{sampled: false}, low) || pb.sample(nil, low) {
		t.Error("parent-based: a child follows its parent; a root follows the ratio")
	}
}

func TestBatchConfig(t *testing.T) {
	def := batchConfig{delay: DefaultScheduleDelay, timeout: DefaultExportTimeout, maxQueue: DefaultMaxQueueSize, maxSize: DefaultMaxExportBatch}
	for _, tc := range []struct {
		env  []string
		want batchConfig
	}{
		{nil, def},
		{[]string{"OTEL_BSP_SCHEDULE_DELAY", "x", "OTEL_BSP_EXPORT_TIMEOUT", "y", "OTEL_BSP_MAX_QUEUE_SIZE", "-1", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0"}, def},
		{[]string{"OTEL_BSP_SCHEDULE_DELAY", "10", "OTEL_BSP_EXPORT_TIMEOUT", "0", "OTEL_BSP_MAX_QUEUE_SIZE", "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"},
			batchConfig{delay: 10 * time.Millisecond, maxQueue: 100, maxSize: 100}},
	} {
		if got := batchConfigFromEnv(envOf(tc.env...)); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.env, got, tc.want)
		}
	}
}

// TestBatcherDropsWhenFull: with a queue of 3 (and a batch of 3, the delay an hour), three
// spans make a batch whose export is held up; of the five that end meanwhile the queue takes
// three and drops two, and Shutdown says so.
func TestBatcherDropsWhenFull(t *testing.T) {
	exp := &batches{}
	blocked := make(chan struct{}, 1)
	release := make(chan struct{})
	blocking := exporterFunc(func(ctx context.Context, s []*SpanRecord) error {
		select {
		case blocked <- struct{}{}:
		default:
		}
		<-release
		return exp.ExportSpans(ctx, s)
	})
	var stderr bytes.Buffer
	tr := tracer(blocking, &stderr, "OTEL_BSP_SCHEDULE_DELAY", "3600000", "OTEL_BSP_MAX_QUEUE_SIZE", "3", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "3")
	for range 3 {
		tr.start(nil, "s", KindInternal).end() // fills the queue: the batch is ready
	}
	<-blocked // the goroutine took the three and waits in the exporter
	for range 5 {
		tr.start(nil, "s", KindInternal).end()
	}
	close(release)
	err := tr.proc.shutdown(context.Background())
	if got := exp.sizes(); len(got) != 2 || got[0] != 3 || got[1] != 3 {
		t.Errorf("batches %v, want [3 3]", got)
	}
	if err == nil || !strings.Contains(err.Error(), "2 spans dropped") || !strings.Contains(err.Error(), "OTEL_BSP_MAX_QUEUE_SIZE") {
		t.Errorf("Shutdown: %v, want the 2 dropped spans reported", err)
	}
}

type exporterFunc func(context.Context, []*SpanRecord) error

func (f exporterFunc) ExportSpans(ctx context.Context, s []*SpanRecord) error { return f(ctx, s) }
func (exporterFunc) Shutdown(context.Context) error                           { return nil }

// TestBatcherBatches: batches hold at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans, each export
// runs within OTEL_BSP_EXPORT_TIMEOUT, and Shutdown exports the rest and shuts the exporter
// down.
func TestBatcherBatches(t *testing.T) {
	exp := &batches{}
	var stderr bytes.Buffer
	tr := tracer(exp, &stderr, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4", "OTEL_BSP_EXPORT_TIMEOUT", "60000")
	spansOf(tr, 5) // 10 spans
	if err := tr.proc.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range exp.sizes() {
		if n > 4 {
			t.Errorf("a batch of %d", n)
		}
		total += n
	}
	for _, d := range exp.deadlines {
		if d <= 0 || d > time.Minute {
			t.Errorf("an export with %v left, want at most the minute OTEL_BSP_EXPORT_TIMEOUT gives", d)
		}
	}
	if total != 10 || !exp.shutdown {
		t.Errorf("%d spans exported (want 10), exporter shut down %v", total, exp.shutdown)
	}
	tr.start(nil, "late", KindInternal).end() // after Shutdown: ignored, not counted
	if err := tr.proc.shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// TestBatcherScheduleDelay: spans are exported once the delay passes, without a full batch.
func TestBatcherScheduleDelay(t *testing.T) {
	exp := &batches{}
	var stderr bytes.Buffer
	tr := tracer(exp, &stderr, "OTEL_BSP_SCHEDULE_DELAY", "1")
	defer tr.proc.shutdown(context.Background())
	spansOf(tr, 1)
	deadline := time.Now().Add(10 * time.Second)
	for len(exp.sizes()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := exp.sizes(); len(got) == 0 || got[0] != 2 {
		t.Errorf("exported %v before shutdown, want the two spans once the delay passed", got)
	}
}

// TestBatcherNoDelay: OTEL_BSP_SCHEDULE_DELAY=0 exports each span as it ends, and the loop
// sleeps while nothing ends (a timer of 0 would wake it without end).
func TestBatcherNoDelay(t *testing.T) {
	exp := &batches{}
	var stderr bytes.Buffer
	tr := tracer(exp, &stderr, "OTEL_BSP_SCHEDULE_DELAY", "0")
	defer tr.proc.shutdown(context.Background())
	spansOf(tr, 1)
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n < 2 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n = 0
		for _, k := range exp.sizes() {
			n += k
		}
	}
	b := tr.proc.(*batcher)
	idle := b.wakes.Load()
	time.Sleep(50 * time.Millisecond)
	if got := exp.sizes(); len(got) == 0 {
		t.Fatalf("nothing exported before shutdown with a delay of 0")
	}
	if woke := b.wakes.Load() - idle; woke > 0 {
		t.Errorf("the idle loop woke %d times in 50 ms with a delay of 0", woke)
	}
}

func TestResource(t *testing.T) {
	var stderr bytes.Buffer
	warn := func(m string) { stderr.WriteString(m + "\n") }
	r := newResource("v1.2.3", envOf("OTEL_RESOURCE_ATTRIBUTES", "a=%zz,b,c=1 ,=e, d = x%20y ,service.name=fromattrs,telemetry.sdk.name=mine"), warn)
	var got []string
	for _, a := range r.Attributes {
		got = append(got, a.Key+"="+a.Value.AsString())
	}
	want := "a=%zz c=1 d=x y service.name=fromattrs service.version=v1.2.3 telemetry.sdk.language=go telemetry.sdk.name=mine telemetry.sdk.version=v1.2.3"
	if strings.Join(got, " ") != want {
		t.Errorf("resource %v\nwant %s", got, want)
	}
	if w := stderr.String(); !strings.Contains(w, "entry 1: the value has an invalid %-escape") || !strings.Contains(w, "entry 2 is not key=value") || strings.Contains(w, "zz") {
		t.Errorf("warnings %q: want entries 1 and 2 named by position, not text", w)
	}
	r = newResource("dev", envOf("OTEL_RESOURCE_ATTRIBUTES", "service.name=fromattrs", "OTEL_SERVICE_NAME", "svc"), warn)
	if v := r.Attributes[0]; v.Key != "service.name" || v.Value.AsString() != "svc" {
		t.Errorf("OTEL_SERVICE_NAME must win: %v", r.Attributes)
	}
	r = newResource("dev", envOf(), warn)
	if len(r.Attributes) != 5 || r.Attributes[3].Key != "telemetry.sdk.name" || r.Attributes[3].Value.AsString() != SDKName {
		t.Errorf("default resource %v", r.Attributes)
	}
}

// TestSpanRecord: attributes keep the place of their first setting and take the last value,
// children are counted, writes after the end are ignored, ids are unique and the trace is
// the parent's.
func TestSpanRecord(t *testing.T) {
	exp := &batches{}
	tr := &Tracer{sampler: sampler{ratio: 1, parentBased: true}, resource: &Resource{}, scope: Scope{Name: "s"}}
	tr.exp = &reporting{Exporter: exp}
	tr.proc = &syncer{exp: tr.exp}
	root := tr.start(nil, "root", KindInternal, count("a", 1), count("b", 2))
	root.set(count("a", 3))
	root.fail("failed")
	child := tr.start(root, "child", KindClient)
	child.event("e", flag("x", true))
	child.end()
	root.end()
	root.set(count("late", 1))
	root.end()
	if got := exp.sizes(); len(got) != 2 {
		t.Fatalf("exports %v, want the child then the root", got)
	}
	c, r := exp.got[0][0], exp.got[1][0]
	var attrs []string
	for _, a := range r.Attributes {
		attrs = append(attrs, a.Key+"="+a.Value.String())
	}
	if strings.Join(attrs, " ") != "a=3 b=2 error.type=failed" || r.Status != (Status{StatusError, "failed"}) || r.ChildSpanCount != 1 {
		t.Errorf("root: %v, status %v, children %d", attrs, r.Status, r.ChildSpanCount)
	}
	if c.TraceID != r.TraceID || c.Parent != r.SpanID || r.Parent.IsValid() || c.SpanID == r.SpanID || c.Kind != KindClient ||
		len(c.Events) != 1 || !c.Events[0].Attributes[0].Value.AsBool() || c.End.Before(c.Start) {
		t.Errorf("child %+v", c)
	}
	seen := map[SpanID]bool{}
	for range 10000 {
		id := newSpanID()
		if seen[id] || !id.IsValid() {
			t.Fatalf("span id %s repeated or zero", id)
		}
		seen[id] = true
	}
}
