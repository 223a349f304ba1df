package schedule

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/run/contract"
)

func plan(deps ...string) []contract.Ticket {
	// deps: "id:dep,dep" per ticket.
	var ts []contract.Ticket
	for _, d := range deps {
		id, rest, _ := strings.Cut(d, ":")
		t := contract.Ticket{ID: id, DependsOn: []string{}}
		if rest != "" {
			t.DependsOn = strings.Split(rest, ",")
		}
		ts = append(ts, t)
	}
	return ts
}

func TestBatches(t *testing.T) {
	for _, c := range []struct {
		plan     []contract.Ticket
		parallel int
		want     [][]string
	}{
		{plan("a"), 1, [][]string{{"a"}}},
		{plan("a", "b", "c"), 2, [][]string{{"a", "b"}, {"c"}}},
		{plan("a", "b", "c"), 8, [][]string{{"a", "b", "c"}}},
		// b depends on a: never in one batch, whatever the parallelism.
		{plan("b:a", "a"), 4, [][]string{{"a"}, {"b"}}},
		// A diamond: d needs b and c, which need a; e is independent.
		{plan("d:b,c", "c:a", "b:a", "a", "e"), 2, [][]string{{"a", "e"}, {"c", "b"}, {"d"}}},
		// A long chain puts z at the level of its longest path, not its shortest.
		{plan("z:a,c", "a", "b:a", "c:b"), 3, [][]string{{"a"}, {"b"}, {"c"}, {"z"}}},
		{nil, 1, nil},
	} {
		got, err := Batches(c.plan, c.parallel)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Batches(%v, %d) = %v, %v; want %v", c.plan, c.parallel, got, err, c.want)
		}
		checkOrder(t, c.plan, got)
	}
	if _, err := Batches(plan("a"), 0); err == nil {
		t.Error("parallel 0 accepted")
	}
}

// checkOrder asserts the batch invariants: every ticket once, every dependency in an
// earlier batch.
func checkOrder(t *testing.T, ts []contract.Ticket, batches [][]string) {
	t.Helper()
	at := map[string]int{}
	for i, b := range batches {
		for _, id := range b {
			if _, dup := at[id]; dup {
				t.Errorf("%s scheduled twice", id)
			}
			at[id] = i
		}
	}
	for _, tk := range ts {
		for _, d := range tk.DependsOn {
			if at[d] >= at[tk.ID] {
				t.Errorf("%s (batch %d) is not after its dependency %s (batch %d)", tk.ID, at[tk.ID], d, at[d])
			}
		}
	}
	if len(at) != len(ts) {
		t.Errorf("%d tickets scheduled, plan has %d", len(at), len(ts))
	}
}

func TestBatchesOfAWidePlan(t *testing.T) {
	// 64 tickets, each depending on every ticket whose index divides its own.
	var ts []contract.Ticket
	for i := 1; i <= contract.MaxItems; i++ {
		tk := contract.Ticket{ID: fmt.Sprint(i)}
		for j := 1; j < i; j++ {
			if i%j == 0 {
				tk.DependsOn = append(tk.DependsOn, fmt.Sprint(j))
			}
		}
		ts = append(ts, tk)
	}
	for _, n := range []int{1, 3, 64} {
		b, err := Batches(ts, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range b {
			if len(batch) > n {
				t.Errorf("parallel %d: a batch of %d", n, len(batch))
			}
		}
		checkOrder(t, ts, b)
	}
	order, err := Order(ts)
	if err != nil || len(order) != len(ts) || order[0] != "1" {
		t.Fatalf("Order = %v, %v", order, err)
	}
}

func TestBatchesRefuseBadPlans(t *testing.T) {
	for _, c := range []struct {
		plan  []contract.Ticket
		code  contract.Code
		cycle []string
	}{
		{plan("a:a"), contract.CodePlanDependencyCycle, []string{"a", "a"}},
		{plan("a:c", "b:a", "c:b"), contract.CodePlanDependencyCycle, []string{"a", "c", "b", "a"}},
		{plan("x", "a:b", "b:a"), contract.CodePlanDependencyCycle, []string{"a", "b", "a"}},
		{plan("a:ghost"), contract.CodePlanDependencyUnknown, nil},
		{plan("a", "a"), contract.CodeDuplicateID, nil},
	} {
		_, err := Batches(c.plan, 2)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || !slices.Equal(e.Cycle, c.cycle) {
			t.Errorf("Batches(%v) = %v; want %s %v", c.plan, err, c.code, c.cycle)
		}
		if _, err := Order(c.plan); err == nil {
			t.Errorf("Order(%v) accepted", c.plan)
		}
	}
}

func TestCheckFanOut(t *testing.T) {
	per := Roles{Writer: Budget{ModelTurns: 4, Tokens: 20000, Elapsed: 10 * time.Minute}, Review: Budget{ModelTurns: 2, Tokens: 10000}}
	remaining := Roles{Writer: Budget{ModelTurns: 20, Tokens: 120000, Elapsed: time.Hour}, Review: Budget{ModelTurns: 10, Tokens: 60000, Elapsed: 0}}
	planned := []Attempts{{"t1", 2, 2}, {"t2", 2, 2}}
	f, err := CheckFanOut(remaining, per, planned)
	if err != nil || !f.Covered || f.Writer.Attempts != 4 || f.Writer.Need != (Budget{16, 80000, 40 * time.Minute}) || f.Review.Need != (Budget{8, 40000, 0}) {
		t.Fatalf("FanOut = %+v, %v", f, err)
	}
	// One more ticket: the writer's turns fall short (its time is just enough); review
	// elapsed is not checked (no per-attempt minimum).
	f, err = CheckFanOut(remaining, per, append(planned, Attempts{"t3", 2, 1}))
	if err != nil || f.Covered || !slices.Equal(f.Writer.Short, []string{"modelTurns"}) || f.Review.Short != nil {
		t.Fatalf("FanOut = %+v, %v", f, err)
	}
	d := f.Detail()
	for _, want := range []string{"writer: 6 attempt(s) need 24 model turns, 120000 tokens, 1h0m0s; 20, 120000, 1h0m0s remain (short of modelTurns)", "review: 5 attempt(s)"} {
		if !strings.Contains(d, want) {
			t.Errorf("Detail = %q, lacks %q", d, want)
		}
	}
	f, _ = CheckFanOut(remaining, per, append(planned, Attempts{"t3", 3, 0}))
	if !slices.Equal(f.Writer.Short, []string{"modelTurns", "tokens", "elapsed"}) {
		t.Errorf("7 writer attempts: %+v", f.Writer)
	}
	// An exhausted review budget is short even for one attempt.
	f, _ = CheckFanOut(Roles{Writer: remaining.Writer, Review: Budget{ModelTurns: 1, Tokens: 0}}, per, []Attempts{{"t1", 1, 1}})
	if f.Covered || !slices.Equal(f.Review.Short, []string{"modelTurns", "tokens"}) {
		t.Fatalf("exhausted review: %+v", f)
	}
	if f, _ := CheckFanOut(remaining, per, nil); !f.Covered {
		t.Error("no planned attempts is not covered")
	}
	if _, err := CheckFanOut(remaining, per, []Attempts{{"t1", -1, 0}}); err == nil {
		t.Error("negative attempts accepted")
	}
}
