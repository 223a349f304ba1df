package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

const proseScenario = `version: 1
turns:
  - text: CANARY-7f3a the requirement looks clear to me.
`

const researchScenario = `version: 1
turns:
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

// TestResearchFreshSessionCanary: a prose attempt fails contract_missing and is retried in a
// fresh session; the retry's requests start at the stage prefix and never carry the canary
// the first attempt's session holds.
func TestResearchFreshSessionCanary(t *testing.T) {
	env, id := startRun(t)
	var requests [][]llm.Message
	calls := 0
	env.Agents = testAgents(env.Home, func(_ string, p ModelPolicy) (llm.Model, error) {
		calls++
		src := researchScenario
		if calls == 1 {
			src = proseScenario
		}
		m, err := script.Parse([]byte(src), "scenario.yaml")
		if err != nil {
			return nil, err
		}
		attempt := calls
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			if attempt > 1 {
				requests = append(requests, append([]llm.Message(nil), req.Messages...))
			}
			return m.Stream(ctx, req, emit)
		}), nil
	})
	stage, err := Next(context.Background(), env, id)
	if err != nil || stage != StageResearch {
		t.Fatalf("Next = %s, %v", stage, err)
	}
	if len(requests) != 2 {
		t.Fatalf("attempt 2 sent %d requests, want 2", len(requests))
	}
	for i, msgs := range requests {
		if len(msgs) == 0 || msgs[0].Role != llm.RoleUser || !strings.HasPrefix(msgs[0].Text(), RequestPrefix(id)+": stage research, attempt 2.") {
			t.Fatalf("request %d does not start at the stage prefix: %+v", i, msgs)
		}
		for _, m := range msgs {
			if strings.Contains(m.Text(), "CANARY-7f3a") {
				t.Fatalf("request %d carries the canary of an earlier session", i)
			}
		}
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stage != StageSpecification || len(rep.Stages) != 4 || rep.Stages[0].State != "completed" || rep.Stages[1].State != "completed" {
		t.Fatalf("report = %+v", rep)
	}
	// The status report names the run's inputs by id and digest, never by their text.
	var shown bytes.Buffer
	rep.WriteText(&shown)
	if js, _ := json.Marshal(rep); bytes.Contains(js, []byte("Do a thing")) || bytes.Contains(js, []byte("CANARY-7f3a")) ||
		strings.Contains(shown.String(), "Do a thing") || strings.Contains(shown.String(), "CANARY-7f3a") {
		t.Fatalf("the status report holds requirement or model text:\n%s", shown.String())
	}
	atts := rep.Stages[0].Attempts
	if len(atts) != 2 || atts[0].Reason != "contract_missing" || atts[1].Outcome != "accepted" || atts[1].Artifact == nil {
		t.Fatalf("attempts = %+v", atts)
	}
	// The first attempt's own session holds the canary; the run ledger never does.
	sdir := filepath.Join(env.Home, filepath.FromSlash(atts[0].Session.Dir))
	sl, _, err := ledger.OpenReadOnly(sdir, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if seq, h := sl.Head(); seq != atts[0].Session.Seq || h != atts[0].Session.Hash {
		t.Fatalf("session head %d %s, attempt anchor %+v", seq, h, atts[0].Session)
	}
	sl.Close()
	if !dirHolds(t, sdir, "CANARY-7f3a") {
		t.Fatal("the first attempt's session should hold its prose answer")
	}
	data, err := os.ReadFile(filepath.Join(env.Home, "runs", id, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "CANARY-7f3a") || strings.Contains(string(data), "Do a thing") {
		t.Fatal("the run ledger holds model or requirement text")
	}
	// Nothing to clarify: the next stage is Specification, which this scenario cannot answer.
	if st, err := Next(context.Background(), env, id); st != StageSpecification || !errors.Is(err, ErrBlocked) {
		t.Fatalf("second Next = %s, %v, want specification blocked", st, err)
	}
}

func dirHolds(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), s) {
			found = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
