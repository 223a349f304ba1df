package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/telemetry"
)

// lsThenSubmit lists the project, then submits a valid Research contract.
const lsThenSubmit = `version: 1
turns:
  - calls: [{name: ls, args: {}}]
  - calls:
      - name: rein_stage_result
        args:
          stage: research
          establishedEvidence: [{id: e1, statement: The requirement asks for a thing., references: [requirement]}]
          remainingUnknowns: []
          requiredEvidenceUnavailable: []
          clarificationQuestions: []
  - text: Submitted.
`

// lsThenAnswer is a person's session doing the same: list, then answer.
const lsThenAnswer = `version: 1
turns:
  - calls: [{name: ls, args: {}}]
  - text: Done.
`

// TestStageAttemptIsAnyAgent: a stage attempt is built and run the one way every agent is:
// its session holds the same kinds of records as a person's `rein -p` session (configuration
// facts, run begin and end, intents, entries, settlements, hook runs), a global PreToolUse
// command hook runs for its tool call, and it emits the same kinds of spans.
func TestStageAttemptIsAnyAgent(t *testing.T) {
	env, id := startRun(t)
	marker := filepath.Join(t.TempDir(), "hook.log")
	write(t, filepath.Join(env.Home, "settings.json"),
		fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"LS","hooks":[{"type":"command","command":"echo pre >> %s"}]}]}}`, marker))
	ctx := context.Background()

	stageSpans := &spanNameSet{}
	tracer, err := telemetry.New(ctx, telemetry.Config{Export: stageSpans})
	if err != nil {
		t.Fatal(err)
	}
	agents := testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(lsThenSubmit), "stage.yaml")
	})
	agents.Tracer = tracer
	env.Agents = agents
	if stage, err := Next(ctx, env, id); err != nil || stage != StageResearch {
		t.Fatalf("next = %s, %v", stage, err)
	}
	if err := tracer.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}

	personSpans := &spanNameSet{}
	ptracer, err := telemetry.New(ctx, telemetry.Config{Export: personSpans})
	if err != nil {
		t.Fatal(err)
	}
	m, err := script.Parse([]byte(lsThenAnswer), "person.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := system.Open(ctx, system.Options{Provider: llm.ProviderScript, Model: "script", Adapter: m, Dir: rep.Project,
		Home: env.Home, Getenv: func(string) string { return "" }, Tracer: ptracer, Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(ctx, llm.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	personLedger := filepath.Join(rt.Session.Dir(), "ledger.jsonl")
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ptracer.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	stageLedger := filepath.Join(env.Home, "runs", id, "stages", "research-1", "ledger.jsonl")
	stageKinds, personKinds := recordKinds(t, stageLedger), recordKinds(t, personLedger)
	if !slices.Equal(stageKinds, personKinds) {
		t.Errorf("record kinds differ:\nstage  %v\nperson %v", stageKinds, personKinds)
	}
	for _, k := range []string{"x-hook", "fact"} {
		if !slices.Contains(stageKinds, k) {
			t.Errorf("the stage session has no %s record (%v)", k, stageKinds)
		}
	}
	data, err := os.ReadFile(marker)
	if err != nil || strings.Count(string(data), "pre") != 2 {
		t.Errorf("the PreToolUse hook ran %q (%v); want once for the stage and once for the person", data, err)
	}
	if s, p := stageSpans.sorted(), personSpans.sorted(); !slices.Equal(s, p) || len(s) < 4 {
		t.Errorf("span names differ:\nstage  %v\nperson %v", s, p)
	}
}

// recordKinds is the sorted set of record kinds of a ledger.
func recordKinds(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// spanNameSet is an exporter that keeps the names of the spans it is given.
// spanNameSet collects span names, GenAI ones by operation only ("chat claude-sonnet-4-5" and
// "execute_tool ls" are "chat" and "execute_tool"): the stage and the person use other models
// and tools.
type spanNameSet struct{ names []string }

func (e *spanNameSet) ExportSpans(_ context.Context, spans []*telemetry.SpanRecord) error {
	for _, s := range spans {
		name, _, _ := strings.Cut(s.Name, " ")
		if !slices.Contains(e.names, name) {
			e.names = append(e.names, name)
		}
	}
	return nil
}

func (e *spanNameSet) Shutdown(context.Context) error { return nil }

func (e *spanNameSet) sorted() []string {
	out := slices.Clone(e.names)
	slices.Sort(out)
	return out
}

// TestStageAttemptsLeakNoDescriptors: fifty stage attempts (fresh sessions, workspaces, ledger
// locks) leave the process with the file descriptors it had.
func TestStageAttemptsLeakNoDescriptors(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(proseScenario), "prose.yaml")
	})
	r, l, err := openRun(env.Home, id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := r.reconcileAndRecord(env, l); err != nil {
		t.Fatal(err)
	}
	pol := r.Lock.Models[RoleWorkflow]
	left := budgetLeft{turns: 10, tokens: 1 << 20, elapsed: 1 << 40}
	attempt := func(n int) {
		a, err := r.modelAttempt(context.Background(), env, n, pol, left, r.researchStage())
		if err != nil || a.Outcome != "failed" {
			t.Fatalf("attempt %d: %+v, %v", n, a, err)
		}
	}
	attempt(1) // the first attempt may open what the process keeps (the poller, caches)
	before := openFDs(t)
	for n := 2; n <= 51; n++ {
		attempt(n)
	}
	if after := openFDs(t); after != before {
		t.Fatalf("%d file descriptors open after 50 attempts, %d before", after, before)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd: ", err)
	}
	return len(fds)
}
