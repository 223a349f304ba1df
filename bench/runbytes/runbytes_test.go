package runbytes

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/bench/mock"
	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	delivery "github.com/reinhq/rein/internal/run"
	"github.com/reinhq/rein/internal/system"
)

var out = flag.String("runbytes.out", "", "write the figures of TestDeliveryRunBytes to this JSON file")

// The demo delivery run's scenarios (rein demo delivery), one per role.
const demodata = "../../internal/cli/demodata"

var roleModels = map[string]string{delivery.RoleWorkflow: "workflow", delivery.RoleWriter: "writer", delivery.RoleReview: "review"}

// capture is the mock's record of a run: every body and every answer, in order.
type capture struct {
	mu      sync.Mutex
	stage   string
	reqs    []Request
	answers []*mock.Turn
}

func (c *capture) body(_ int, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, Request{Stage: c.stage, Body: b})
}

func (c *capture) setStage(s string) { c.mu.Lock(); c.stage = s; c.mu.Unlock() }

// TestDeliveryRunBytes takes the demo's requirement through a whole delivery run (every
// stage to Delivery Ready, real git, real go test) with its three roles on openai-compat
// models served by the mock, which answers from the demo's scenarios and keeps every body.
func TestDeliveryRunBytes(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s on PATH: %v", tool, err)
		}
	}
	models := map[string]*script.Model{}
	for role, name := range roleModels {
		m, err := script.Load(filepath.Join(demodata, "delivery_"+role+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		models[name] = m
	}
	c := &capture{}
	answer := scenarioAnswer(models)
	srv := httptest.NewServer(mock.New(nil, mock.Options{Body: c.body, Answer: func(api string, body []byte) (*mock.Turn, error) {
		turn, err := answer(api, body)
		c.mu.Lock()
		c.answers = append(c.answers, turn)
		c.mu.Unlock()
		return turn, err
	}}))
	defer srv.Close()

	base := t.TempDir()
	repo, home := filepath.Join(base, "repo"), filepath.Join(base, "home")
	harness := delivery.Harness{Version: "bench"}
	setupRepo(t, repo, harness.Version, srv.URL+"/v1")
	req := filepath.Join(base, "requirement.md")
	os.WriteFile(req, []byte("# Add and Sub\n\nPackage calc needs Add(a, b int) int and, after it, Sub(a, b int) int, each with a test.\n"), 0o644)
	env := delivery.Env{Home: home, Harness: harness, Workflow: delivery.DeliveryWorkflow(),
		Agents: &system.Agents{Home: home, Getenv: func(string) string { return "" }, Retry: llm.RetryPolicy{MaxAttempts: 1}}}
	id, err := delivery.Start(env, delivery.StartOptions{Project: repo, Requirement: req})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, env, id, c)

	if len(c.answers) != len(c.reqs) {
		t.Fatalf("%d answers for %d requests", len(c.answers), len(c.reqs))
	}
	for i, a := range c.answers {
		if a == nil {
			t.Fatalf("request %d got no answer", i+1)
		}
		c.reqs[i].Answer = turnMessage(i+1, a)
	}
	f, err := Measure(c.reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Sessions { // the reviews run inside the ticket stage's Next; the metrics name their stage
		if s := &f.Sessions[i]; s.Stage == delivery.StageTicketExecution && s.Model == roleModels[delivery.RoleReview] {
			s.Stage = "ticket-review"
		}
	}
	crossCheck(t, env, id, f)
	if f.Ratio <= 0 || f.Ratio >= 1 || f.OneSessionBytes <= f.TotalBytes {
		t.Errorf("ratio %.3f: a run of %d sessions should send less than one session carrying their history", f.Ratio, len(f.Sessions))
	}
	for _, s := range f.Sessions {
		t.Logf("%-22s %-8s %2d requests, first %6d B (fixed %6d, pack %6d), total %7d B, one-session %8d B",
			s.Stage, s.Model, s.Requests, s.FirstBytes, s.FixedBytes, s.PackBytes, s.TotalBytes, s.OneSessionBytes)
	}
	t.Logf("run: %d sessions, %d requests, %d B; one session: %d B; ratio %.3f", len(f.Sessions), f.Requests, f.TotalBytes, f.OneSessionBytes, f.Ratio)
	if *out != "" {
		data, _ := json.MarshalIndent(f, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// turnMessage is the answer to request n as the history carries it, with the tool-call ids
// the mock gave it.
func turnMessage(n int, t *mock.Turn) chatMessage {
	content, _ := json.Marshal(t.Text)
	m := chatMessage{Role: "assistant", Content: content}
	for i, call := range t.Calls {
		tc := chatToolCall{ID: fmt.Sprintf("call_%d_%d", n, i)}
		tc.Function.Name, tc.Function.Arguments = call.Name, string(call.Args)
		m.ToolCalls = append(m.ToolCalls, tc)
	}
	return m
}

// setupRepo is the demo's repository with the three roles on openai-compat models at base.
func setupRepo(t *testing.T, repo, harness, base string) {
	t.Helper()
	files := map[string]string{
		"go.mod":    "module example.com/calc\n\ngo 1.22\n",
		"calc.go":   "// Package calc is a tiny arithmetic package.\npackage calc\n",
		"AGENTS.md": "# Rules\n\nEvery exported function has a test. Run go test ./... before submitting.\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := delivery.Draft(repo, harness)
	if err != nil {
		t.Fatal(err)
	}
	p.Verification = map[string]delivery.Verification{"test": {Argv: []string{"go", "test", "./..."}, Required: true}}
	for role, model := range roleModels {
		p.Models[role] = delivery.ModelPolicy{Provider: llm.ProviderOpenAICompat, Model: model, BaseURL: base, Budget: delivery.DefaultBudget(role)}
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(delivery.ProfilePath)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := gitx.Runner{Dir: repo}
	if _, err := g.Run(ctx, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := delivery.Approve(repo, "bench", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"config", "user.name", "bench"}, {"config", "user.email", "bench@rein.invalid"},
		{"add", "-A"}, {"commit", "-q", "-m", "calc: an empty package, its rules and an approved profile"}} {
		if _, err := g.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// drive moves the run on to Delivery Ready, approving every gate, telling the capture which
// stage each request belongs to.
func drive(t *testing.T, env delivery.Env, id string, c *capture) {
	t.Helper()
	stages := map[string]delivery.WorkflowStage{}
	for _, s := range env.Workflow.Stages {
		stages[s.ID] = s
	}
	for range 4 * len(env.Workflow.Stages) {
		rep, err := delivery.Status(env, id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Stage == delivery.StageDeliveryReady {
			return
		}
		if st := stages[rep.Stage]; st.Kind == delivery.KindGate {
			approved := false
			for _, g := range rep.Gates {
				if g.Gate == st.Gate && g.State == "awaiting approval" {
					if _, err := delivery.ApproveGate(env, id, st.Gate, artifact.Digest(g.Digest), "bench"); err != nil {
						t.Fatal(err)
					}
					approved = true
				}
			}
			if !approved {
				t.Fatalf("run %s is at %s with no artifact awaiting approval", id, st.Name)
			}
			continue
		}
		c.setStage(rep.Stage)
		if _, err := delivery.Next(context.Background(), env, id); err != nil {
			t.Fatalf("stage %s: %v", rep.Stage, err)
		}
	}
	t.Fatalf("run %s did not reach Delivery Ready", id)
}

// crossCheck holds the wire figures against `rein run metrics`: one session per settled
// attempt of each stage and role, and first requests that carry at least the pack and the
// fixed part the run ledger recorded (the ledger measures rein's request, the wire adds the
// Chat Completions framing and JSON escapes).
func crossCheck(t *testing.T, env delivery.Env, id string, f *Figures) {
	t.Helper()
	m, err := delivery.RunMetrics(env, id)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ stage, model string }
	got := map[key][]Session{}
	for _, s := range f.Sessions {
		got[key{s.Stage, s.Model}] = append(got[key{s.Stage, s.Model}], s)
	}
	for _, st := range m.Stages {
		k := key{st.Stage, roleModels[st.Role]}
		ss := got[k]
		if len(ss) != st.Attempts {
			t.Errorf("%s/%s: %d sessions on the wire, %d attempts in the metrics", st.Stage, st.Role, len(ss), st.Attempts)
			continue
		}
		first, fixed, pack := 0, 0, 0
		for _, s := range ss {
			first, fixed, pack = first+s.FirstBytes, fixed+s.FixedBytes, pack+s.PackBytes
		}
		t.Logf("%s/%s: wire first %d B (fixed %d, pack %d); metrics request %d B (fixed %d, pack %d)",
			st.Stage, st.Role, first, fixed, pack, st.RequestBytes, st.FixedBytes, st.PackBytes)
		if pack < st.PackBytes {
			t.Errorf("%s/%s: the first user messages hold %d B, less than the %d B pack the metrics recorded", st.Stage, st.Role, pack, st.PackBytes)
		}
		delete(got, k)
	}
	for k, ss := range got {
		t.Errorf("%s/%s: %d sessions on the wire that the metrics do not count", k.stage, k.model, len(ss))
	}
}
