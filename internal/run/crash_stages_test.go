package run

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

var crashAllPoints = flag.Bool("rein.crash.all", false, "crash the later stages at every session ledger write (slow)")

// stageCanary is prose the Research session holds and no later stage may ever see.
const stageCanary = "CANARY-research-4c1e"

// workflowScenario answers Research (with the canary in prose beside its tool call),
// Specification and Ticket Planning.
const workflowScenario = `version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - text: ` + stageCanary + ` I looked around before submitting.
        calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence: [{id: e1, statement: The requirement asks for a thing., references: [requirement]}]
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: A thing
              sections:
                - id: s1
                  title: Scope
                  body: Do the thing.
                  items:
                    - {id: r1, kind: requirement, statement: The thing is done.}
                    - {id: a1, kind: acceptance, statement: The thing is observably done.}
              inputReferences: [requirement, research]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t1, title: Do the thing, specItemIds: [r1, a1], dependsOn: []}
      - text: Submitted.
`

func workflowModel(string, ModelPolicy) (llm.Model, error) {
	return script.Parse([]byte(workflowScenario), "scenario.yaml")
}

func workflowEnv(home string) Env {
	env := crashEnv(home)
	env.Agents = testAgents(env.Home, workflowModel)
	return env
}

// advanceTo runs the stages (approving the Spec Gate) until the run is at stage; before is
// called with the stage each Next call is about to run.
func advanceTo(t *testing.T, env Env, id, stage string, before func(string)) {
	t.Helper()
	for range 8 {
		rep, err := Status(env, id)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		if rep.Stage == stage {
			return
		}
		if rep.Stage == StageSpecGate {
			for _, g := range rep.Gates {
				if g.Gate == GateSpec {
					if _, err := ApproveGate(env, id, GateSpec, artifact.Digest(g.Digest), "ana"); err != nil {
						t.Fatal(err)
					}
				}
			}
			continue
		}
		if before != nil {
			before(rep.Stage)
		}
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatalf("Next at %s: %v", rep.Stage, err)
		}
	}
	t.Fatalf("run never reached %s", stage)
}

// TestStageCrashChild is the later-stage crash test's child: like TestResumeCrashChild, it
// runs Next (now at REIN_RUN_CRASH_STAGE) and SIGKILLs itself at REIN_RUN_CRASH_AT.
func TestStageCrashChild(t *testing.T) {
	if os.Getenv("REIN_RUN_CRASH_STAGE") == "" {
		t.Skip("runs only as the stage crash test's child process")
	}
	env := installCrash(workflowEnv(os.Getenv("REIN_RUN_CRASH_HOME")), os.Getenv("REIN_RUN_CRASH_AT"))
	if _, err := Next(context.Background(), env, os.Getenv("REIN_RUN_CRASH_ID")); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterCrashLaterStages SIGKILLs Specification and Ticket Planning at the points
// TestResumeAfterCrash uses for Research, then resumes: the stage ends completed exactly
// once, with one artifact, and settling again leaves the run ledger byte-identical.
func TestResumeAfterCrashLaterStages(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	points := []string{"hook:session", "write:1", "write:2:after", "write:4", "write:6:after", "write:8", "hook:artifact", "hook:attempt"}
	if *crashAllPoints {
		points = []string{"hook:session", "hook:artifact", "hook:attempt"}
		for n := 1; n <= 10; n++ {
			points = append(points, "write:"+strconv.Itoa(n), "write:"+strconv.Itoa(n)+":after")
		}
	}
	for _, stage := range []struct{ name, gate, art string }{
		{StageSpecification, StageSpecGate, "spec"},
		{StageTicketPlanning, StageTicketPlanGate, "ticket-plan"},
	} {
		for _, at := range points {
			t.Run(stage.name+"/"+strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
				env0, id := startRun(t)
				env := workflowEnv(env0.Home)
				advanceTo(t, env, id, stage.name, nil)
				cmd := exec.Command(os.Args[0], "-test.run=^TestStageCrashChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), "REIN_RUN_CRASH_HOME="+env.Home, "REIN_RUN_CRASH_ID="+id,
					"REIN_RUN_CRASH_AT="+at, "REIN_RUN_CRASH_STAGE="+stage.name)
				out, err := cmd.CombinedOutput()
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					// A write point past the session's last write never fires.
					if err == nil && strings.HasPrefix(at, "write:") && *crashAllPoints {
						t.Skipf("the session made fewer writes than %s", at)
					}
					t.Fatalf("child was not killed at %s: %v\n%s", at, err, out)
				}
				res, err := Resume(context.Background(), env, id)
				if err != nil || res.Stage != stage.name {
					t.Fatalf("Resume = %+v, %v", res, err)
				}
				// Recovery a second time changes nothing.
				settleTwice(t, env, id)
				rep, err := Status(env, id)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Stage != stage.gate {
					t.Fatalf("stage %s, want %s", rep.Stage, stage.gate)
				}
				var sr *StageReport
				for i := range rep.Stages {
					if rep.Stages[i].Stage == stage.name {
						sr = &rep.Stages[i]
					}
				}
				if sr == nil || sr.State != "completed" || len(sr.Attempts) == 0 {
					t.Fatalf("report = %+v", rep.Stages)
				}
				accepted := 0
				for i, a := range sr.Attempts {
					if a.Attempt != i+1 {
						t.Fatalf("attempts %+v", sr.Attempts)
					}
					if a.Outcome == "accepted" {
						accepted++
					}
				}
				if accepted != 1 || sr.Attempts[len(sr.Attempts)-1].Outcome != "accepted" {
					t.Fatalf("attempts %+v", sr.Attempts)
				}
				completed := 0
				for rec, err := range mustReadLedger(t, filepath.Join(env.Home, "runs", id)) {
					if err != nil {
						t.Fatal(err)
					}
					if rec.Kind == KindStageCompleted && bytes.Contains(rec.Body, []byte(`"stage":"`+stage.name+`"`)) {
						completed++
					}
				}
				if completed != 1 {
					t.Fatalf("%s completed %d times", stage.name, completed)
				}
				r, l, err := openRun(env.Home, id)
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
				arts, _ := filepath.Glob(filepath.Join(r.Project, filepath.FromSlash(RunsDir), id, stage.art+"*.md"))
				if len(arts) != 1 {
					t.Fatalf("%s artifacts %v", stage.name, arts)
				}
				t.Logf("%s %s: attempts %d", stage.name, at, len(sr.Attempts))
			})
		}
	}
}

// TestCanaryNeverCrossesStages: the Research session holds a canary in prose; no request of
// Specification or Ticket Planning (each marshalled whole) ever carries it.
func TestCanaryNeverCrossesStages(t *testing.T) {
	env0, id := startRun(t)
	env := workflowEnv(env0.Home)
	current := ""
	bodies := map[string][]string{}
	watchStages(&env, &current, func(stage string, req *llm.Request) {
		data, err := json.Marshal(req)
		if err != nil {
			t.Errorf("marshal request: %v", err)
		}
		bodies[stage] = append(bodies[stage], string(data))
	})
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })
	for _, s := range []string{StageResearch, StageSpecification, StageTicketPlanning} {
		if len(bodies[s]) < 2 {
			t.Fatalf("%s sent %d requests, want at least 2", s, len(bodies[s]))
		}
	}
	// The spy sees the canary where it belongs: Research's own follow-up request.
	if !strings.Contains(bodies[StageResearch][len(bodies[StageResearch])-1], stageCanary) {
		t.Fatal("Research's follow-up request does not carry its own prose: the spy sees nothing")
	}
	for _, s := range []string{StageSpecification, StageTicketPlanning} {
		for i, b := range bodies[s] {
			if strings.Contains(b, stageCanary) {
				t.Fatalf("%s request %d carries the Research session's canary", s, i)
			}
			if !strings.Contains(b, RequestPrefix(id)+": stage "+s+", attempt 1.") {
				t.Fatalf("%s request %d does not hold its stage request: %.300s", s, i, b)
			}
		}
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if !dirHolds(t, filepath.Join(env.Home, filepath.FromSlash(rep.Stages[0].Attempts[0].Session.Dir)), stageCanary) {
		t.Fatal("the Research session ledger should hold the canary")
	}
	if data, err := os.ReadFile(filepath.Join(env.Home, "runs", id, ledger.FileName)); err != nil || bytes.Contains(data, []byte(stageCanary)) {
		t.Fatalf("the run ledger holds the canary (or is unreadable: %v)", err)
	}
	if dirHolds(t, filepath.Join(rep.Project, filepath.FromSlash(RunsDir), id), stageCanary) {
		t.Fatal("a run artifact holds the canary")
	}
}

// installCrash arms env's SIGKILL point at (hook:NAME, or write:N[:after] for the N-th write
// to a stage session's ledger), as TestResumeCrashChild does, and returns env.
func installCrash(env Env, at string) Env {
	p := strings.Split(at, ":")
	switch p[0] {
	case "hook":
		env.Crash = func(name string) {
			if name == p[1] {
				sigkill()
			}
		}
	case "write":
		n, _ := strconv.Atoi(p[1])
		after := len(p) > 2
		seen := 0
		env.SessionFS = &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(op ledgertest.Op) *ledgertest.Fault {
			if op.Kind != "write" || filepath.Base(op.Name) != ledger.FileName {
				return nil
			}
			if seen++; seen != n {
				return nil
			}
			if after {
				return &ledgertest.Fault{Written: op.Size, Before: sigkill}
			}
			return &ledgertest.Fault{Before: sigkill}
		}}
	}
	return env
}

// watchStages makes env's stage agents run the workflow scenario and show every request to
// see, with the stage that *current names when the agent is built.
func watchStages(env *Env, current *string, see func(stage string, req *llm.Request)) {
	env.Agents = testAgents(env.Home, func(p string, pol ModelPolicy) (llm.Model, error) {
		m, err := workflowModel(p, pol)
		if err != nil {
			return nil, err
		}
		stage := *current
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			see(stage, req)
			return m.Stream(ctx, req, emit)
		}), nil
	})
}
