package schedule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/run/contract"
)

// Error is a plan this package cannot order.
type Error struct {
	Code   contract.Code // CodePlanDependencyUnknown, CodePlanDependencyCycle or CodeDuplicateID
	Ticket string        // the ticket concerned
	// Cycle is the dependency cycle found, its first id repeated at the end.
	Cycle  []string
	Detail string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: ticket %q: %s", e.Code, e.Ticket, e.Detail) }

// Batches returns the plan's ticket ids in batches that may each run with at most parallel
// tickets at once, every batch after all the batches its tickets depend on (see the package
// doc). parallel must be at least 1.
func Batches(tickets []contract.Ticket, parallel int) ([][]string, error) {
	if parallel < 1 {
		return nil, fmt.Errorf("schedule: parallel is %d; at least 1 ticket must run at a time", parallel)
	}
	levels, err := levelsOf(tickets)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, level := range levels {
		for chunk := range slices.Chunk(level, parallel) {
			out = append(out, chunk)
		}
	}
	return out, nil
}

// Order returns the plan's ticket ids in a dependency order: every ticket after the tickets
// it depends on, otherwise in plan order by level.
func Order(tickets []contract.Ticket) ([]string, error) {
	batches, err := Batches(tickets, 1)
	if err != nil {
		return nil, err
	}
	return slices.Concat(batches...), nil
}

// levelsOf groups the ticket ids by level (the longest dependency chain below a ticket), in
// plan order within a level.
func levelsOf(tickets []contract.Ticket) ([][]string, error) {
	index := make(map[string]int, len(tickets))
	for i, t := range tickets {
		if _, dup := index[t.ID]; dup {
			return nil, &Error{Code: contract.CodeDuplicateID, Ticket: t.ID, Detail: "the id names two tickets of the plan"}
		}
		index[t.ID] = i
	}
	for _, t := range tickets {
		for _, d := range t.DependsOn {
			if _, ok := index[d]; !ok {
				return nil, &Error{Code: contract.CodePlanDependencyUnknown, Ticket: t.ID, Detail: fmt.Sprintf("depends on %q, which is no ticket of the plan", d)}
			}
		}
	}
	level := make([]int, len(tickets)) // 0: not visited; -1: on the path; else level+1
	var path []string
	var visit func(i int) (int, error)
	visit = func(i int) (int, error) {
		switch level[i] {
		case -1:
			start := slices.Index(path, tickets[i].ID)
			cyc := append(slices.Clone(path[start:]), tickets[i].ID)
			return 0, &Error{Code: contract.CodePlanDependencyCycle, Ticket: tickets[i].ID, Cycle: cyc,
				Detail: "dependency cycle " + strings.Join(cyc, " → ")}
		case 0:
		default:
			return level[i] - 1, nil
		}
		level[i] = -1
		path = append(path, tickets[i].ID)
		l := 0
		for _, d := range tickets[i].DependsOn {
			dl, err := visit(index[d])
			if err != nil {
				return 0, err
			}
			l = max(l, dl+1)
		}
		path = path[:len(path)-1]
		level[i] = l + 1
		return l, nil
	}
	var levels [][]string
	for i := range tickets {
		l, err := visit(i)
		if err != nil {
			return nil, err
		}
		for len(levels) <= l {
			levels = append(levels, nil)
		}
	}
	for i, t := range tickets {
		levels[level[i]-1] = append(levels[level[i]-1], t.ID)
	}
	return levels, nil
}
