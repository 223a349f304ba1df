package loop

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/ledger"
)

// Transition is one state a loop entered, in ledger order: a round's end or a change outside
// a round (a gate decided, a budget raised, drift, a refusal).
type Transition struct {
	Seq    int64  `json:"seq"`
	Round  int    `json:"round,omitempty"` // the round that ended, 0 outside a round
	State  string `json:"state"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// History returns loop id's state transitions and its checkpoints, oldest first, read from
// its ledger without writing anything.
func History(env Env, id string) ([]Transition, []Checkpoint, error) {
	if _, err := readView(env.Home, id); err != nil {
		return nil, nil, err
	}
	var ts []Transition
	var cps []Checkpoint
	visit := func(r ledger.Record) error {
		var err error
		switch r.Kind {
		case KindStarted:
			ts = append(ts, Transition{Seq: r.Seq, State: StateReady, Reason: ReasonStarted})
		case KindState:
			var s stateChange
			if err = json.Unmarshal(r.Body, &s); err == nil {
				ts = append(ts, Transition{Seq: r.Seq, State: s.State, Reason: s.Reason, Detail: s.Detail})
			}
		case KindRoundEnd:
			var e roundEnd
			if err = json.Unmarshal(r.Body, &e); err == nil {
				ts = append(ts, Transition{Seq: r.Seq, Round: e.Round, State: e.State, Reason: e.Reason, Detail: e.Detail})
			}
		case KindCheckpoint:
			var c Checkpoint
			if err = json.Unmarshal(r.Body, &c); err == nil {
				cps = append(cps, c)
			}
		}
		if err != nil {
			return fmt.Errorf("%w: loop ledger record %d (%s): %w", ledger.ErrCorrupt, r.Seq, r.Kind, err)
		}
		return nil
	}
	if _, _, err := ledger.OpenReadOnly(loopDir(env.Home, id), ledger.Options{Visit: visit}); err != nil {
		return nil, nil, fmt.Errorf("loop %s: %w", id, err)
	}
	return ts, cps, nil
}
