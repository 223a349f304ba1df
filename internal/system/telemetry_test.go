package system

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/telemetry"
)

// Secret-looking canaries, each placed in one kind of content the run handles.
const (
	canaryPrompt   = "sk-ant-api03-CANARYPROMPT7f3a9c"
	canaryThinking = "ghp_CANARYTHINKING0000000000000000000"
	canaryText     = "xoxb-CANARY-ASSISTANT-TEXT-1234"
	canaryArg      = "AKIACANARYTOOLARGUMENT"
	canaryFile     = "sk-proj-CANARYFILECONTENTS5b6c"
	canaryOutput   = "glpat-CANARYSHELLOUTPUT99"
	canaryBadArg   = "sk-CANARYINVALIDARGUMENT42"
	canaryTool     = "sk_live_CANARYTOOLNAME"
	canaryRetry    = "Bearer CANARYRETRYERRORMESSAGE"
	canaryFinal    = "npm_CANARYFINALANSWER0000"
	canaryFailure  = "sk-ant-CANARYTERMINALERROR"
	// In the raw JSON of a tool call's arguments: after a "\n" escape, and with its first
	// byte written "\u0041".
	canaryEscaped = "ghp_CANARYAFTERNEWLINEESCAPE000000000"
	canaryUnicode = "KIACANARYUNICODEESCAPE"
)

var canaries = []string{canaryPrompt, canaryThinking, canaryText, canaryArg, canaryFile, canaryOutput, canaryBadArg,
	canaryTool, canaryRetry, canaryFinal, canaryFailure, canaryEscaped, "A" + canaryUnicode,
	// Fragments, in case an exporter splits or escapes a value.
	"CANARY"}

// canaryScenario writes a file with canaries (one behind a JSON escape in the raw arguments,
// one written in a \u escape), reads it back, runs a command that prints one,
// makes an invalid call and a call to a tool that does not exist (both with canaries in the
// arguments), and answers after a retried rate-limit error whose message holds a canary.
var canaryScenario = fmt.Sprintf(`
version: 1
model: script-canary
pricing: {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75}
dialogs:
  - match: terminal
    turns:
      - error: {kind: auth, status: 401, message: "invalid key %[11]s"}
  - turns:
      - thinking: "considering %[2]s"
        text: "I will write %[3]s"
        calls:
          - {name: write, id: call_write, raw: '{"path": "notes.txt", "content": "%[4]s\n%[12]s\n\u0041%[13]s"}'}
          - {name: read, id: call_read, args: {path: secret.txt}}
          - {name: bash, id: call_bash, args: {command: "echo %[6]s"}}
          - {name: read, id: call_bad, args: {path: 1, extra: "%[7]s"}}
          - {name: "%[8]s", id: call_unknown, args: {x: "%[8]s"}}
        usage: {input: 100, output: 20, cacheRead: 50, cacheWrite: 10}
      - error: {kind: rate_limit, status: 429, message: "slow down %[9]s"}
        times: 1
        text: "done %[10]s"
        usage: {input: 200, output: 5}
`, canaryPrompt, canaryThinking, canaryText, canaryArg, canaryFile, canaryOutput, canaryBadArg, canaryTool, canaryRetry,
	canaryFinal, canaryFailure, canaryEscaped, canaryUnicode)

// tee exports to several exporters.
type tee []telemetry.Exporter

func (t tee) ExportSpans(ctx context.Context, spans []*telemetry.SpanRecord) error {
	for _, e := range t {
		if err := e.ExportSpans(ctx, spans); err != nil {
			return err
		}
	}
	return nil
}

func (t tee) Shutdown(ctx context.Context) error {
	for _, e := range t {
		if err := e.Shutdown(ctx); err != nil {
			return err
		}
	}
	return nil
}

// memory keeps every span it is given.
type memory struct{ spans []*telemetry.SpanRecord }

func (m *memory) ExportSpans(_ context.Context, spans []*telemetry.SpanRecord) error {
	m.spans = append(m.spans, spans...)
	return nil
}

func (m *memory) Shutdown(context.Context) error { return nil }

// tracedRun builds a runtime on the canary scenario with every span exported to memory and,
// in full as the stdout exporter writes it, to a buffer; runs prompt; and shuts tracing down.
func tracedRun(t *testing.T, prompt string) ([]*telemetry.SpanRecord, string) {
	t.Helper()
	dir, home := t.TempDir(), t.TempDir()
	scenario := filepath.Join(t.TempDir(), "canary.yaml")
	for path, data := range map[string]string{scenario: canaryScenario, filepath.Join(dir, "secret.txt"): canaryFile + "\n"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := &memory{}
	var full bytes.Buffer
	tracer, err := telemetry.New(context.Background(), telemetry.Config{Export: tee{mem, telemetry.NewStdoutExporter(&full)}})
	if err != nil {
		t.Fatal(err)
	}
	retry := llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }}
	rt, err := Build(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Tracer: tracer, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Session.BeginRun(); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Agent.Run(context.Background(), nil, llm.UserText(prompt))
	if out == nil {
		t.Fatalf("run: %v", err)
	}
	rt.Session.EndRun(string(out.Status))
	rt.Close()
	spans := mem.spans
	if err := tracer.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spans, full.String()
}

// TestTraceCarriesNoContent is the canary test: a run whose prompt, thinking, answer, tool
// arguments, tool outputs, file contents and error messages hold secret-looking strings
// exports none of them — not in a span name, attribute, event, status, link or resource.
func TestTraceCarriesNoContent(t *testing.T) {
	for _, prompt := range []string{"please do it " + canaryPrompt, "terminal " + canaryPrompt} {
		spans, full := tracedRun(t, prompt)
		if len(spans) < 5 || !strings.Contains(full, telemetry.ChatSpan("script")) {
			t.Fatalf("%q: only %d spans exported; the test would check nothing", prompt, len(spans))
		}
		js, err := json.Marshal(spans)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range canaries {
			for what, text := range map[string]string{"span stubs": string(js), "stdout exporter output": full} {
				if i := strings.Index(text, c); i >= 0 {
					t.Errorf("%q: canary %q leaked into the %s: …%s…", prompt, c, what, text[max(0, i-200):min(len(text), i+100)])
				}
			}
		}
	}
}

// TestTraceTree checks the span tree of a traced run: run > turn > step > ai.request, turn >
// tool > step > session.write, and the attributes that carry usage, retries and outcomes.
func TestTraceTree(t *testing.T) {
	spans, _ := tracedRun(t, "please do it")
	byID := map[string]*telemetry.SpanRecord{}
	for _, s := range spans {
		byID[s.SpanID.String()] = s
	}
	parent := func(s *telemetry.SpanRecord) string {
		if !s.Parent.IsValid() {
			return ""
		}
		return byID[s.Parent.String()].Name
	}
	attrs := func(s *telemetry.SpanRecord) map[string]any {
		m := map[string]any{}
		for _, kv := range s.Attributes {
			m[kv.Key] = kv.Value.AsInterface()
		}
		return m
	}
	// A GenAI span is named after its operation and model or tool ("chat script",
	// "execute_tool read"); named("chat") finds them all.
	is := func(s *telemetry.SpanRecord, name string) bool {
		return s.Name == name || strings.HasPrefix(s.Name, name+" ")
	}
	parentIs := func(s *telemetry.SpanRecord, name string) bool {
		return s.Parent.IsValid() && is(byID[s.Parent.String()], name)
	}
	named := func(name string) []*telemetry.SpanRecord {
		var out []*telemetry.SpanRecord
		for _, s := range spans {
			if is(s, name) {
				out = append(out, s)
			}
		}
		return out
	}
	trace := spans[0].TraceID
	for _, s := range spans {
		if s.TraceID != trace {
			t.Errorf("%s is in another trace", s.Name)
		}
	}

	runs := named(telemetry.SpanRun)
	if len(runs) != 1 || parent(runs[0]) != "" {
		t.Fatalf("want one root rein.run, got %d", len(runs))
	}
	ra := attrs(runs[0])
	if ra[telemetry.AttrRunStatus] != "completed" || ra[telemetry.AttrRunTurns] != int64(2) || ra[telemetry.GenAIProviderName] != "script" ||
		ra[telemetry.GenAIUsageInputTokens] != int64(360) || ra[telemetry.GenAIUsageOutputTokens] != int64(25) || ra[telemetry.AttrSessionID] == nil {
		t.Errorf("run attributes: %v", ra)
	}
	if turns := named(telemetry.SpanTurn); len(turns) != 2 || parent(turns[0]) != telemetry.SpanRun {
		t.Errorf("want two turns under the run, got %d", len(turns))
	}

	reqs := named(telemetry.OpChat)
	if len(reqs) != 2 {
		t.Fatalf("want 2 ai requests (the retry is inside the second), got %d", len(reqs))
	}
	for i, r := range reqs {
		a := attrs(r)
		if parent(r) != telemetry.SpanStep || parent(byID[r.Parent.String()]) != telemetry.SpanTurn {
			t.Errorf("request %d: parent %s, want a step under a turn", i, parent(r))
		}
		if a[telemetry.GenAIRequestModel] != "script" || a[telemetry.GenAIResponseModel] != "script-canary" || a[telemetry.GenAIOperationName] != "chat" {
			t.Errorf("request %d attributes: %v", i, a)
		}
		if _, ok := a[telemetry.AttrTimeToFirstChunk]; !ok {
			t.Errorf("request %d has no time to first chunk", i)
		}
	}
	first, second := attrs(reqs[0]), attrs(reqs[1])
	if first[telemetry.GenAIUsageInputTokens] != int64(160) || first[telemetry.GenAIUsageCacheReadTokens] != int64(50) ||
		first[telemetry.GenAIUsageCacheWriteTokens] != int64(10) || first[telemetry.AttrRetryCount] != int64(0) ||
		!slices.Equal(first[telemetry.GenAIResponseFinishReason].([]string), []string{"toolUse"}) {
		t.Errorf("first request: %v", first)
	}
	if cost := first[telemetry.AttrCostUSD].(float64); cost < 0.00065249 || cost > 0.00065251 { // (100*3 + 20*15 + 50*0.3 + 10*3.75) / 1M
		t.Errorf("first request cost %v", cost)
	}
	if second[telemetry.AttrRetryCount] != int64(1) || len(reqs[1].Events) != 1 || reqs[1].Events[0].Name != telemetry.EventRetry {
		t.Errorf("second request: retries %v, events %v", second[telemetry.AttrRetryCount], reqs[1].Events)
	}

	tools := named(telemetry.OpExecuteTool)
	if len(tools) != 5 {
		t.Fatalf("want 5 tool spans, got %d", len(tools))
	}
	outcomes := map[string]string{}
	for _, s := range tools {
		a := attrs(s)
		outcomes[a[telemetry.GenAIToolCallID].(string)] = a[telemetry.AttrToolOutcome].(string) + "/" + a[telemetry.GenAIToolName].(string)
		if parent(s) != telemetry.SpanTurn {
			t.Errorf("tool %v under %s", a[telemetry.GenAIToolCallID], parent(s))
		}
	}
	want := map[string]string{"call_write": "completed/write", "call_read": "completed/read", "call_bash": "completed/bash",
		"call_bad": "not_run/read", "call_unknown": "not_run/other"}
	for id, w := range want {
		if outcomes[id] != w {
			t.Errorf("tool %s: %s, want %s", id, outcomes[id], w)
		}
	}
	var toolSteps, writes, seqs int
	for _, s := range named(telemetry.SpanStep) {
		a := attrs(s)
		if a[telemetry.AttrStepOutcome] != telemetry.OutcomeSucceeded || a[telemetry.AttrIntentID] == nil {
			t.Errorf("step %v", a)
		}
		if a[telemetry.AttrStepKind] == telemetry.StepToolCall {
			toolSteps++
			if !parentIs(s, telemetry.OpExecuteTool) || a[telemetry.AttrToolReplay] == nil {
				t.Errorf("tool step %v under %s", a, parent(s))
			}
		}
	}
	for _, s := range named(telemetry.SpanSessionWrite) {
		writes++
		if _, ok := attrs(s)[telemetry.AttrSeq]; ok {
			seqs++
		}
	}
	if toolSteps != 3 || writes == 0 || seqs != writes {
		t.Errorf("tool steps %d (want 3), session writes %d of which %d with a seq", toolSteps, writes, seqs)
	}
	if cps := named(telemetry.SpanCheckpoint); len(cps) != 2 || attrs(cps[1])[telemetry.AttrSeq] == nil {
		t.Errorf("want a turn_end checkpoint with a seq per turn, got %d", len(cps))
	}
}
