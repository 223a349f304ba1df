package run

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
)

// TestBlockerNamesItsTicket: a run.blocked record this rein writes carries schema 2, and a
// ticket is blocked when a blocker's ticket field names it — a run-level blocker whose detail
// mentions a ticket blocks none. A record without the schema (an older ledger) keeps being
// read: its blockers name their ticket only in the detail text, which is what decides then.
func TestBlockerNamesItsTicket(t *testing.T) {
	data, err := json.Marshal(blockedBody{Blockers: []Blocker{{Code: BlockTicketFailed, Stage: StageTicketExecution, Ticket: "t1", Detail: "ticket t1 used 3 writer attempts"}}})
	if err != nil || !strings.Contains(string(data), `"schema":2`) || !strings.Contains(string(data), `"ticket":"t1"`) {
		t.Fatalf("run.blocked body = %s, %v", data, err)
	}
	for _, tc := range []struct {
		name, body string
		want       map[string]string // ticket → state
	}{
		{"field", string(data), map[string]string{"t1": "blocked", "t2": "pending"}},
		{"run-level, detail names a ticket", `{"blockers":[{"code":"run_budget_insufficient","stage":"ticket-execution","detail":"ticket t1 and ticket t2's budgets","recovery":[]}],"schema":2}`,
			map[string]string{"t1": "pending", "t2": "pending"}},
		{"old record", `{"blockers":[{"code":"run_ticket_failed","stage":"ticket-execution","detail":"ticket t2 used 3 writer attempts","recovery":[]}]}`,
			map[string]string{"t1": "pending", "t2": "blocked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{}
			if err := r.apply(ledger.Record{Kind: KindBlocked, Body: json.RawMessage(tc.body)}); err != nil {
				t.Fatal(err)
			}
			for id, want := range tc.want {
				if got := ticketStateOf(&ticketRun{ID: id}, r.Blockers); got != want {
					t.Errorf("ticket %s: %s, want %s (blockers %+v)", id, got, want, r.Blockers)
				}
			}
		})
	}
}
