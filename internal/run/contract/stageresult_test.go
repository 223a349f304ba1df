package contract

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// call runs the tool the way the kernel does: ValidateCall against the schema, then Run.
func call(t *testing.T, st *StageResult, raw string) (tool.Result, error) {
	t.Helper()
	args, err := tool.ValidateCall(st, raw)
	if err != nil {
		return tool.Result{}, err
	}
	return st.Run(context.Background(), tool.Call{ID: "c1", Args: args})
}

func text(r tool.Result) string {
	var b strings.Builder
	for _, p := range r.Content {
		if p.Type == llm.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func newTool(t *testing.T, k Kind, refs Refs, sink Sink) *StageResult {
	t.Helper()
	c, err := For(k)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStageResult(c, refs, sink)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStageResultAcceptsOnce(t *testing.T) {
	var stored []*Accepted
	st := newTool(t, KindResearch, packRefs, func(_ context.Context, a *Accepted) error { stored = append(stored, a); return nil })
	if st.Spec().Name != ToolName || st.Spec().Replay != tool.ReplayNever || !st.Spec().Sequential {
		t.Fatalf("spec = %+v", st.Spec())
	}
	good := string(mustJSON(t, maximalResearch()))
	res, err := call(t, st, good)
	if err != nil || res.IsError {
		t.Fatalf("first submission: %v %s", err, text(res))
	}
	if len(stored) != 1 || stored[0].Research == nil || !strings.Contains(text(res), stored[0].Digest) {
		t.Fatalf("stored %v, result %q", stored, text(res))
	}
	res, err = call(t, st, good)
	if err != nil || !res.IsError || !strings.Contains(text(res), string(CodeAlreadySubmitted)) {
		t.Fatalf("second submission: %v %v %s", err, res.IsError, text(res))
	}
	if len(stored) != 1 {
		t.Fatalf("stored twice")
	}
	a, err := st.Outcome()
	if err != nil || a != stored[0] {
		t.Fatalf("Outcome = %v, %v", a, err)
	}
}

func TestStageResultRefusals(t *testing.T) {
	st := newTool(t, KindTicketPlanning, planRefs, func(context.Context, *Accepted) error { return nil })
	// The schema refuses an extra key before Run, listing it for the model.
	d := minimalPlan()
	d["notes"] = "x"
	_, err := call(t, st, string(mustJSON(t, d)))
	var ve *tool.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("extra key: err = %v", err)
	}
	// 65 tickets: the schema's maxItems refuses them too.
	d = minimalPlan()
	d["tickets"] = list(MaxItems+1, func(int) any { return at(minimalPlan(), "tickets", 0) })
	if _, err := call(t, st, string(mustJSON(t, d))); !errors.As(err, &ve) {
		t.Fatalf("65 items: err = %v", err)
	}
	// A cycle passes the schema; Run refuses it with a code and a path.
	d = maximalPlan()
	at(d, "tickets", 0)["dependsOn"] = []any{"t5"}
	res, err := call(t, st, string(mustJSON(t, d)))
	if err != nil || !res.IsError {
		t.Fatalf("cycle: %v %v", err, res.IsError)
	}
	e, ok := res.Details.(*Error)
	if !ok || !e.Has(CodePlanDependencyCycle) || !strings.Contains(text(res), "tickets[0].dependsOn") {
		t.Fatalf("cycle: details %v, text %s", res.Details, text(res))
	}
	// A fake secret passes the schema; Run refuses it without repeating it.
	d = minimalPlan()
	at(d, "tickets", 0)["title"] = "use " + fakeSecret(t)
	res, err = call(t, st, string(mustJSON(t, d)))
	if err != nil || !res.IsError || !strings.Contains(text(res), string(CodeSecret)) || tokenShape.MatchString(text(res)) {
		t.Fatalf("secret: %v %s", err, text(res))
	}
	if _, err := st.Outcome(); !isReason(err, ReasonContractRefused) {
		t.Fatalf("Outcome after refusals = %v", err)
	}
	// A corrected submission is then accepted.
	res, err = call(t, st, string(mustJSON(t, minimalPlan())))
	if err != nil || res.IsError {
		t.Fatalf("corrected: %v %s", err, text(res))
	}
	if a, err := st.Outcome(); err != nil || a.TicketPlan == nil {
		t.Fatalf("Outcome = %v %v", a, err)
	}
}

func TestStageResultSinkFailure(t *testing.T) {
	fail := true
	st := newTool(t, KindSpecification, packRefs, func(context.Context, *Accepted) error {
		if fail {
			return errors.New("disk full")
		}
		return nil
	})
	raw := string(mustJSON(t, minimalSpec()))
	if _, err := call(t, st, raw); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if st.Accepted() != nil {
		t.Fatal("accepted although not stored")
	}
	fail = false
	if res, err := call(t, st, raw); err != nil || res.IsError {
		t.Fatalf("retry: %v", err)
	}
}

func isReason(err error, r Reason) bool {
	var ae *AttemptError
	return errors.As(err, &ae) && ae.Reason == r
}

func TestProseWithoutToolCall(t *testing.T) {
	for _, k := range Kinds {
		st := newTool(t, k, packRefs, func(context.Context, *Accepted) error {
			t.Fatal("sink called without a submission")
			return nil
		})
		// The model answered "Research done: everything is clear." and ended its turn.
		a, err := st.Outcome()
		if a != nil || !isReason(err, ReasonContractMissing) {
			t.Fatalf("%s: Outcome = %v, %v", k, a, err)
		}
		if !strings.Contains(err.Error(), "contract_missing") {
			t.Fatalf("%s: %v", k, err)
		}
	}
}
