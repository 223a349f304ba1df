package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

const candDigest = "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

var reviewRefs = packRefs.WithCandidate(candDigest)

func finding(id string) doc {
	return doc{"id": id, "path": "internal/x/x.go", "line": 12, "statement": "the error loses its cause"}
}

func minimalReview() doc {
	return doc{"candidateDigest": candDigest, "blockingFindings": []any{}, "advisoryFindings": []any{}, "conclusion": "accept"}
}

func maximalReview() doc {
	return doc{"candidateDigest": candDigest,
		"blockingFindings": list(MaxItems, func(i int) any { return finding(fmt.Sprintf("b%d", i)) }),
		"advisoryFindings": list(MaxItems, func(i int) any { return doc{"id": fmt.Sprintf("a%d", i), "statement": strings.Repeat("s", 1000)} }),
		"conclusion":       "request-changes"}
}

func TestTicketReview(t *testing.T) {
	cases := commonCases(KindTicketReview, minimalReview, reviewRefs, "advisoryFindings", func(i int) any { return finding(fmt.Sprint(i)) })
	f0 := func(d doc) doc { return at(d, "blockingFindings", 0) }
	cases = append(cases,
		tcase{name: "valid maximal", raw: edit(maximalReview, func(*testing.T, doc) {}), refs: reviewRefs},
		tcase{name: "finding without path or line", raw: edit(maximalReview, func(_ *testing.T, d doc) { delete(f0(d), "path"); delete(f0(d), "line") }), refs: reviewRefs},
		tcase{name: "another candidate's digest", raw: edit(minimalReview, func(_ *testing.T, d doc) { d["candidateDigest"] = "sha256:" + strings.Repeat("a", 64) }), refs: reviewRefs, want: []Code{CodeReviewCandidateMismatch}, path: "candidateDigest"},
		tcase{name: "unbound refs bind no digest", raw: edit(minimalReview, func(*testing.T, doc) {}), refs: packRefs, want: []Code{CodeReviewCandidateMismatch}},
		tcase{name: "accept with a blocking finding", raw: edit(maximalReview, func(_ *testing.T, d doc) { d["conclusion"] = "accept" }), refs: reviewRefs, want: []Code{CodeReviewConclusion}, path: "conclusion"},
		tcase{name: "request changes without a blocking finding", raw: edit(minimalReview, func(_ *testing.T, d doc) { d["conclusion"] = "request-changes" }), refs: reviewRefs, want: []Code{CodeReviewConclusion}},
		tcase{name: "bad conclusion", raw: edit(minimalReview, func(_ *testing.T, d doc) { d["conclusion"] = "lgtm" }), refs: reviewRefs, want: []Code{CodeBadEnum}, path: "conclusion"},
		tcase{name: "duplicate id across lists", raw: edit(maximalReview, func(_ *testing.T, d doc) { at(d, "advisoryFindings", 3)["id"] = "b7" }), refs: reviewRefs, want: []Code{CodeDuplicateID}, path: "advisoryFindings[3].id"},
		tcase{name: "escaping path", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["path"] = "../../etc/passwd" }), refs: reviewRefs, want: []Code{CodeReviewFindingPath}, path: "blockingFindings[0].path"},
		tcase{name: "absolute path", raw: edit(maximalReview, func(_ *testing.T, d doc) { at(d, "blockingFindings", 2)["path"] = "/etc/passwd" }), refs: reviewRefs, want: []Code{CodeReviewFindingPath}, path: "blockingFindings[2].path"},
		tcase{name: "backslash path", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["path"] = `a\b.go` }), refs: reviewRefs, want: []Code{CodeReviewFindingPath}},
		tcase{name: "line without path", raw: edit(maximalReview, func(_ *testing.T, d doc) { delete(f0(d), "path") }), refs: reviewRefs, want: []Code{CodeReviewLineWithoutPath}, path: "blockingFindings[0].line"},
		tcase{name: "line zero", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["line"] = 0 }), refs: reviewRefs, want: []Code{CodeOutOfRange}, path: "blockingFindings[0].line"},
		tcase{name: "line too large", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["line"] = MaxFindingLine + 1 }), refs: reviewRefs, want: []Code{CodeOutOfRange}},
		tcase{name: "line beyond int64", raw: func(t *testing.T) []byte {
			return []byte(strings.Replace(string(mustJSON(t, maximalReview())), `"line":12`, `"line":99999999999999999999999`, 1))
		}, refs: reviewRefs, want: []Code{CodeOutOfRange}},
		tcase{name: "fractional line", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["line"] = 1.5 }), refs: reviewRefs, want: []Code{CodeWrongType}, path: "blockingFindings[0].line"},
		tcase{name: "line as a string", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["line"] = "12" }), refs: reviewRefs, want: []Code{CodeWrongType}},
		tcase{name: "oversize statement", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["statement"] = strings.Repeat("s", 4097) }), refs: reviewRefs, want: []Code{CodeStringTooLarge}, path: "blockingFindings[0].statement"},
		tcase{name: "fake secret", raw: edit(maximalReview, func(t *testing.T, d doc) { f0(d)["statement"] = "hard-coded " + fakeSecret(t) }), refs: reviewRefs, want: []Code{CodeSecret}, path: "blockingFindings[0].statement"},
		tcase{name: "blank statement", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["statement"] = "  " }), refs: reviewRefs, want: []Code{CodeEmptyString}},
		tcase{name: "unknown finding key", raw: edit(maximalReview, func(_ *testing.T, d doc) { f0(d)["severity"] = "high" }), refs: reviewRefs, want: []Code{CodeUnknownKey}, path: "blockingFindings[0].severity"},
	)
	runCases(t, KindTicketReview, cases)
}

var candRefs = NewRefs().WithTicket("t1", "unit", "lint")

func minimalCandidate() doc {
	return doc{"ticketId": "t1", "summary": "adds the export"}
}

func TestTicketCandidate(t *testing.T) {
	cases := commonCases(KindTicketCandidate, minimalCandidate, candRefs, "verificationIds", func(i int) any { return fmt.Sprintf("c%d", i) })
	cases = append(cases,
		tcase{name: "valid with verification ids", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["verificationIds"] = []any{"lint", "unit"} }), refs: candRefs},
		tcase{name: "another ticket", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["ticketId"] = "t2" }), refs: candRefs, want: []Code{CodeCandidateTicketMismatch}, path: "ticketId"},
		tcase{name: "unbound refs bind no ticket", raw: edit(minimalCandidate, func(*testing.T, doc) {}), refs: packRefs, want: []Code{CodeCandidateTicketMismatch}},
		tcase{name: "unapproved command", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["verificationIds"] = []any{"unit", "rm -rf /"} }), refs: candRefs, want: []Code{CodeCandidateVerificationUnbound}, path: "verificationIds[1]"},
		tcase{name: "a command twice", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["verificationIds"] = []any{"unit", "unit"} }), refs: candRefs, want: []Code{CodeDuplicateID}, path: "verificationIds[1]"},
		tcase{name: "fake secret", raw: edit(minimalCandidate, func(t *testing.T, d doc) { d["summary"] = "uses " + fakeSecret(t) }), refs: candRefs, want: []Code{CodeSecret}, path: "summary"},
		tcase{name: "oversize summary", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["summary"] = strings.Repeat("s", 4097) }), refs: candRefs, want: []Code{CodeStringTooLarge}},
		tcase{name: "writer claims", raw: edit(minimalCandidate, func(_ *testing.T, d doc) { d["testsPassed"] = true }), refs: candRefs, want: []Code{CodeUnknownKey}},
	)
	runCases(t, KindTicketCandidate, cases)
}

func TestReviewTool(t *testing.T) {
	if _, err := NewReviewTool(packRefs, func(context.Context, *Accepted) error { return nil }); err == nil {
		t.Fatal("a review tool without a candidate digest was built")
	}
	var stored []*Accepted
	rt, err := NewReviewTool(reviewRefs, func(_ context.Context, a *Accepted) error { stored = append(stored, a); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if s := rt.Spec(); s.Name != ReviewToolName || !s.Sequential || s.Replay != tool.ReplayNever || !strings.Contains(string(s.Schema), `"candidateDigest"`) {
		t.Fatalf("spec = %+v", s)
	}
	if _, err := rt.Outcome(); !isReason(err, ReasonContractMissing) || !strings.Contains(err.Error(), ReviewToolName) {
		t.Fatalf("Outcome before a call = %v", err)
	}
	bad := minimalReview()
	bad["candidateDigest"] = "sha256:" + strings.Repeat("b", 64)
	res, err := runTool(t, rt, mustJSON(t, bad))
	if err != nil || !res.IsError || !strings.Contains(text(res), string(CodeReviewCandidateMismatch)) {
		t.Fatalf("stale digest: %v %s", err, text(res))
	}
	if _, err := rt.Outcome(); !isReason(err, ReasonContractRefused) {
		t.Fatalf("Outcome after a refusal = %v", err)
	}
	res, err = runTool(t, rt, mustJSON(t, maximalReview()))
	if err != nil || res.IsError || len(stored) != 1 || stored[0].TicketReview == nil || len(stored[0].TicketReview.BlockingFindings) != MaxItems {
		t.Fatalf("accepted: %v %s %v", err, text(res), stored)
	}
	res, _ = runTool(t, rt, mustJSON(t, minimalReview()))
	if !res.IsError || !strings.Contains(text(res), string(CodeAlreadySubmitted)) {
		t.Fatalf("second review: %s", text(res))
	}
	if a, err := rt.Outcome(); err != nil || a != stored[0] {
		t.Fatalf("Outcome = %v %v", a, err)
	}
}

func runTool(t *testing.T, tl tool.Tool, raw []byte) (tool.Result, error) {
	t.Helper()
	args, err := tool.ValidateCall(tl, string(raw))
	if err != nil {
		return tool.Result{}, err
	}
	return tl.Run(context.Background(), tool.Call{ID: "c1", Args: args})
}

// fakeEngine is a Freezer whose checks answer from a queue, recording each call.
type fakeEngine struct {
	mu     sync.Mutex
	answer []error
	calls  int
}

func (f *fakeEngine) freeze(_ context.Context, a *Accepted) (Frozen, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if a.TicketCandidate == nil {
		return Frozen{}, errors.New("not a candidate")
	}
	if len(f.answer) > 0 {
		err := f.answer[0]
		f.answer = f.answer[1:]
		if err != nil {
			return Frozen{}, err
		}
	}
	return Frozen{Commit: strings.Repeat("c", 40), DiffDigest: "sha256:d", Digest: candDigest}, nil
}

func TestCandidateTool(t *testing.T) {
	eng := &fakeEngine{answer: []error{
		CandidateRefusal(CodeCandidateDiffEmpty, "", "the worktree has no change"),
		CandidateRefusal(CodeCandidateVerificationFailed, "verificationIds", "unit exited 1:\n--- FAIL: TestExport"),
		errors.New("disk full"),
	}}
	if _, err := NewCandidateTool(packRefs, eng.freeze); err == nil {
		t.Fatal("a candidate tool without a ticket was built")
	}
	ct, err := NewCandidateTool(candRefs, eng.freeze)
	if err != nil {
		t.Fatal(err)
	}
	if s := ct.Spec(); s.Name != CandidateToolName || !s.Sequential || s.Replay != tool.ReplayNever {
		t.Fatalf("spec = %+v", s)
	}
	if _, err := ct.Outcome(); !isReason(err, ReasonContractMissing) || !strings.Contains(err.Error(), CandidateToolName) {
		t.Fatalf("Outcome before a call = %v", err)
	}
	// Refused by validation: the engine is not asked.
	wrong := minimalCandidate()
	wrong["ticketId"] = "t9"
	if res, err := runTool(t, ct, mustJSON(t, wrong)); err != nil || !strings.Contains(text(res), string(CodeCandidateTicketMismatch)) || eng.calls != 0 {
		t.Fatalf("wrong ticket: %v %s, engine called %d times", err, text(res), eng.calls)
	}
	good := mustJSON(t, minimalCandidate())
	for _, want := range []Code{CodeCandidateDiffEmpty, CodeCandidateVerificationFailed} {
		res, err := runTool(t, ct, good)
		e, _ := res.Details.(*Error)
		if err != nil || !res.IsError || e == nil || !e.Has(want) || e.Kind != KindTicketCandidate {
			t.Fatalf("engine refusal %s: %v %s", want, err, text(res))
		}
	}
	if !strings.Contains(text(mustRun(t, ct, good, true)), "disk full") || ct.Accepted() != nil {
		t.Fatal("an engine failure was not an error, or accepted the candidate")
	}
	if _, err := ct.Outcome(); !isReason(err, ReasonContractRefused) {
		t.Fatalf("Outcome after refusals = %v", err)
	}
	res := mustRun(t, ct, good, false)
	if !strings.Contains(text(res), candDigest) || ct.Accepted() == nil || ct.Accepted().TicketCandidate.TicketID != "t1" {
		t.Fatalf("accepted: %s", text(res))
	}
	if res := mustRun(t, ct, good, false); !res.IsError || !strings.Contains(text(res), string(CodeAlreadySubmitted)) {
		t.Fatalf("second submission: %s", text(res))
	}
	if eng.calls != 4 {
		t.Errorf("engine called %d times, want 4 (never after the accepted one)", eng.calls)
	}
	if c, err := ct.Outcome(); err != nil || c.Frozen.Digest != candDigest || !strings.HasPrefix(c.Digest, "sha256:") {
		t.Fatalf("Outcome = %+v %v", c, err)
	}
}

// TestCandidateToolSerialised: concurrent submissions reach the engine one at a time and only
// one is accepted.
func TestCandidateToolSerialised(t *testing.T) {
	var inside, maxInside int
	var mu sync.Mutex
	ct, err := NewCandidateTool(candRefs, func(context.Context, *Accepted) (Frozen, error) {
		mu.Lock()
		inside++
		maxInside = max(maxInside, inside)
		mu.Unlock()
		defer func() { mu.Lock(); inside--; mu.Unlock() }()
		return Frozen{Commit: "c", DiffDigest: "d", Digest: "sha256:x"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	good := mustJSON(t, minimalCandidate())
	var wg sync.WaitGroup
	accepted := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			res, err := runTool(t, ct, good)
			accepted <- err == nil && !res.IsError
		})
	}
	wg.Wait()
	close(accepted)
	n := 0
	for ok := range accepted {
		if ok {
			n++
		}
	}
	if n != 1 || maxInside != 1 {
		t.Fatalf("%d accepted, %d in the engine at once; want 1 and 1", n, maxInside)
	}
}

// mustRun runs the tool; wantErr says whether Run must fail (the result is then a text of
// the error).
func mustRun(t *testing.T, tl tool.Tool, raw []byte, wantErr bool) tool.Result {
	t.Helper()
	res, err := runTool(t, tl, raw)
	if (err != nil) != wantErr {
		t.Fatalf("err = %v, want error %v", err, wantErr)
	}
	if err != nil {
		return tool.TextResult(err.Error())
	}
	return res
}
