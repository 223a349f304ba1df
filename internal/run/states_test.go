package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/system"
)

// statusText is the report as `rein run status` prints it.
func statusText(t *testing.T, env Env, id string) (*Report, string) {
	t.Helper()
	rep, _ := Status(env, id)
	if rep == nil {
		t.Fatal("no report")
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	return rep, b.String()
}

// TestStatesAfterTheirEvents: a started run is ready (with the command that goes on), a run at
// the Spec Gate waits for a person (the gate, its artifact, its digest and the exact approve
// and reject commands, and approving with that command's digest works), an aborted run is
// aborted.
func TestStatesAfterTheirEvents(t *testing.T) {
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	rep, text := statusText(t, env, id)
	if rep.State != StateReady || rep.Command != "rein run next "+id || !strings.Contains(text, "state: ready\n") ||
		!strings.Contains(text, "next: rein run next "+id+"\n") || rep.SchemaVersion != StatusSchemaVersion {
		t.Fatalf("after start: state %s command %q:\n%s", rep.State, rep.Command, text)
	}
	for range 2 { // Research (Clarification passes by itself), Specification
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatal(err)
		}
	}
	rep, text = statusText(t, env, id)
	w := rep.Waiting
	if rep.State != StateWaitingForHuman || w == nil || w.Gate != GateSpec || w.Artifact != ArtSpec || w.Digest == "" {
		t.Fatalf("at the Spec Gate: state %s waiting %+v", rep.State, w)
	}
	approve := "rein run approve " + id + " --gate spec --digest " + w.Digest
	for _, want := range []string{"state: waiting_for_human\n", "waiting: gate spec (spec-gate) on spec " + w.Path + " digest " + w.Digest + "\n",
		"  " + approve + "\n", "  rein run reject " + id + " --gate spec --reason TEXT\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	digest := strings.TrimPrefix(w.Commands[0], "rein run approve "+id+" --gate spec --digest ")
	if _, err := ApproveGate(env, id, GateSpec, artifact.Digest(digest), "ana"); err != nil {
		t.Fatalf("approving with the shown command's digest: %v", err)
	}
	if rep, _ := statusText(t, env, id); rep.State != StateReady || rep.Stage != StageTicketPlanning {
		t.Fatalf("after approval: %s at %s", rep.State, rep.Stage)
	}
	if err := Abort(env, id, "done"); err != nil {
		t.Fatal(err)
	}
	if rep, _ := statusText(t, env, id); rep.State != StateAborted {
		t.Fatalf("after abort: %s", rep.State)
	}
}

// TestClarificationWaits: a required evidence gap makes the run wait for its answers after
// Research, naming the gap and the command.
func TestClarificationWaits(t *testing.T) {
	env0, first := startRun(t)
	rep, _ := Status(env0, first)
	if _, err := git(rep.Project, "branch", "rein/existing"); err != nil {
		t.Fatal(err)
	}
	env := workflowEnv(env0.Home)
	id, err := Start(env, StartOptions{Project: rep.Project, Requirement: filepath.Join(rep.Project, "req.md"), Branch: "rein/existing"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	rep, text := statusText(t, env, id)
	if rep.State != StateWaitingForHuman || rep.Waiting == nil || rep.Waiting.Kind != "clarification" ||
		!strings.Contains(text, "waiting: clarification of branch-exists\n") || !strings.Contains(text, "  rein run clarify "+id+" --answers FILE\n") {
		t.Fatalf("after research with a required gap: %s %+v\n%s", rep.State, rep.Waiting, text)
	}
}

// TestLeaseRefusesAndIsTakenOver: while a live process (this one) holds the lease, status says
// running and next refuses with ErrRunning, changing nothing; a lease whose process is gone
// makes the run interrupted, and next takes it over (recorded) and removes it when done.
func TestLeaseRefusesAndIsTakenOver(t *testing.T) {
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	path := filepath.Join(env.Home, "runs", id, LeaseFile)
	if err := createLease(path, "next", time.Now()); err != nil {
		t.Fatal(err)
	}
	rep, text := statusText(t, env, id)
	if rep.State != StateRunning || rep.Lease == nil || !rep.Lease.Live || rep.Lease.PID != os.Getpid() || !strings.Contains(text, "state: running\n") {
		t.Fatalf("with a live lease: %s %+v\n%s", rep.State, rep.Lease, text)
	}
	before := snapshotRun(t, env, id)
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("next under a live lease = %v; want ErrRunning naming the holder", err)
	}
	sameFiles(t, "a refused next", before, snapshotRun(t, env, id))

	// A lease of a process that is gone: the pid of one that never ran here (start time differs).
	stale, _ := json.Marshal(Lease{PID: os.Getpid(), StartTime: "1", Host: rep.Lease.Host, Command: "next", Acquired: time.Now()})
	if err := os.WriteFile(path, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, text = statusText(t, env, id)
	if rep.State != StateInterrupted || rep.Command != "rein run resume "+id || !strings.Contains(text, "interrupted: resume with rein run resume "+id+"\n") {
		t.Fatalf("with a stale lease: %s\n%s", rep.State, text)
	}
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("next over a stale lease: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lease is left after next: %v", err)
	}
	if n := countKind(t, env, id, KindLeaseTakenOver, `"startTime":"1"`); n != 1 {
		t.Fatalf("%d takeover records naming the stale lease", n)
	}
	m, err := RunMetrics(env, id)
	if err != nil || m.Recoveries[RecoveryLeaseTakenOver] != 1 {
		t.Fatalf("metrics = %+v, %v", m, err)
	}
}

// overloadedServer answers every Chat Completions request with a 503, or, once healthy is set,
// with a valid Research contract and then a short text.
type overloadedServer struct {
	mu       sync.Mutex
	healthy  bool
	requests int
}

func (s *overloadedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests++
	healthy := s.healthy
	s.mu.Unlock()
	if !healthy {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"upstream unavailable","type":"server_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.Contains(string(body), `"role":"tool"`) {
		io.WriteString(w, `data: {"id":"c2","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Submitted."},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":3}}`+"\n\ndata: [DONE]\n\n")
		return
	}
	args, _ := json.Marshal(`{"stage":"research","establishedEvidence":[{"id":"e1","statement":"The requirement asks for a thing.","references":["requirement"]}],"remainingUnknowns":[],"requiredEvidenceUnavailable":[],"clarificationQuestions":[]}`)
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"rein_stage_result","arguments":`+string(args)+`}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":20}}`+"\n\ndata: [DONE]\n\n")
}

// TestProviderOutageIsACause: an OpenAI-compatible server answering 503 until the model
// call's retries are exhausted fails the attempt with cause provider_unavailable (kind server,
// HTTP 503) — recorded at once, not left to resume as interrupted — and `next` reports the
// provider's error; the run is ready, and once the provider answers the next attempt is
// accepted (the outage does not count against the stage's attempts).
func TestProviderOutageIsACause(t *testing.T) {
	srv := &overloadedServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	env, id := startRunWith(t, func(p *Profile) {
		m := p.Models[RoleWorkflow]
		m.Provider, m.Model, m.BaseURL, m.Script = llm.ProviderOpenAICompat, "local-model", hs.URL+"/v1", ""
		p.Models[RoleWorkflow] = m
	})
	env.Agents = &system.Agents{Home: env.Home, Getenv: func(string) string { return "" },
		Retry: llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		NewModel: func(_ string, m agentspec.Model) (llm.Model, error) {
			return openaicompat.New(openaicompat.Config{Model: m.Model, BaseURL: m.BaseURL, APIKey: "sk-test", HTTPClient: hs.Client()})
		}}
	_, err := Next(context.Background(), env, id)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != http.StatusServiceUnavailable || !strings.Contains(err.Error(), CauseProviderUnavailable) {
		t.Fatalf("next during the outage = %v; want the provider's 503", err)
	}
	if srv.requests != 3 {
		t.Fatalf("the server saw %d requests; the retry policy allows 3", srv.requests)
	}
	rep, text := statusText(t, env, id)
	atts := rep.Stages[0].Attempts
	if len(atts) != 1 || atts[0].Outcome != "failed" || atts[0].Cause == nil || atts[0].Cause.Code != CauseProviderUnavailable ||
		atts[0].Cause.ErrorKind != string(llm.KindServer) || atts[0].Cause.HTTPStatus != 503 {
		t.Fatalf("attempts = %+v", atts)
	}
	if rep.State != StateReady || !strings.Contains(text, "  attempt 1: failed provider_unavailable (server, HTTP 503)") {
		t.Fatalf("after the outage: %s\n%s", rep.State, text)
	}
	if n := countKind(t, env, id, KindStageAttempt, `"code":"provider_unavailable"`); n != 1 {
		t.Fatalf("%d stage.attempt records with the cause", n)
	}
	srv.mu.Lock()
	srv.healthy = true
	srv.mu.Unlock()
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatalf("next once the provider answers: %v", err)
	}
	m, err := RunMetrics(env, id)
	if err != nil {
		t.Fatal(err)
	}
	research := m.Stages[0]
	if research.Attempts != 2 || research.Outcomes[CauseProviderUnavailable] != 1 || research.Outcomes["accepted"] != 1 ||
		m.Recoveries[RecoveryProviderRetried] != 1 || research.RequestBytes == 0 || research.PackBytes == 0 {
		t.Fatalf("metrics = %+v", m)
	}
}

// invalidScenario submits a Research contract citing a reference that is no pack id and
// asking a question linked to no unknown, then gives up in prose: every attempt fails
// contract_invalid.
const invalidScenario = `version: 1
turns:
  - calls:
      - name: rein_stage_result
        args:
          stage: research
          establishedEvidence: [{id: e1, statement: A fact., references: [nowhere]}]
          remainingUnknowns: []
          requiredEvidenceUnavailable: []
          clarificationQuestions: [{id: q1, question: "Which one?", unknownIds: []}]
    usage: {input: 300, output: 40}
  - text: I give up.
    usage: {input: 350, output: 5}
`

// TestContractInvalidCauseAndMetrics: refused submissions fail each attempt with cause
// contract_invalid and the problems' codes; the run blocks after the stage's attempts; the
// metrics' numbers are the sums of the ledger's stage.attempt records.
func TestContractInvalidCauseAndMetrics(t *testing.T) {
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(invalidScenario), "invalid.yaml")
	})
	if _, err := Next(context.Background(), env, id); !errors.Is(err, ErrBlocked) {
		t.Fatalf("next = %v; want blocked after the attempts", err)
	}
	rep, text := statusText(t, env, id)
	if rep.State != StateBlocked || len(rep.Stages[0].Attempts) != MaxStageAttempts {
		t.Fatalf("state %s, attempts %d", rep.State, len(rep.Stages[0].Attempts))
	}
	for _, a := range rep.Stages[0].Attempts {
		c := a.Cause
		if c == nil || c.Code != CauseContractInvalid || c.Problems["research_provenance_unbound"] != 1 {
			t.Fatalf("attempt %d cause = %+v", a.Attempt, c)
		}
	}
	if !strings.Contains(text, "failed contract_invalid (research_provenance_unbound×1") {
		t.Fatalf("status does not show the cause:\n%s", text)
	}
	m, err := RunMetrics(env, id)
	if err != nil {
		t.Fatal(err)
	}
	// The ledger's own numbers, read record by record.
	want := newCounts()
	for rec, err := range mustReadLedger(t, filepath.Join(env.Home, "runs", id)) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != KindStageAttempt {
			continue
		}
		var a Attempt
		if err := json.Unmarshal(rec.Body, &a); err != nil {
			t.Fatal(err)
		}
		want.add(a)
	}
	got := m.Stages[0].Counts
	if got.Attempts != 3 || got.Outcomes[CauseContractInvalid] != 3 || got.Problems["research_provenance_unbound"] != 3 ||
		got.InputTokens != 3*650 || got.OutputTokens != 3*45 || got.RequestBytes == 0 || got.FixedBytes == 0 || got.PackBytes == 0 {
		t.Fatalf("research metrics = %+v", got)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	r, _ := json.Marshal(m.Roles[0].Counts)
	if string(g) != string(w) || string(r) != string(w) || m.Blockers[BlockStageFailed] != 1 {
		t.Fatalf("metrics %s / role %s; the ledger's stage.attempt records sum to %s (blockers %v)", g, r, w, m.Blockers)
	}
	before := snapshotRun(t, env, id)
	if _, err := RunMetrics(env, id); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "metrics", before, snapshotRun(t, env, id))
	if data, _ := os.ReadFile(filepath.Join(env.Home, "runs", id, ledger.FileName)); bytes.Contains(data, []byte("I give up")) {
		t.Fatal("the model's prose reached the run ledger")
	}
}
