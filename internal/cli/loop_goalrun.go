package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/reinhq/rein/internal/loop"
	delivery "github.com/reinhq/rein/internal/run"
)

// loopRuns drives the delivery run a loop's goal names through the delivery-run engine: the
// calls `rein run next` makes (and `rein run resume`, for a run a crash interrupted).
type loopRuns struct {
	e    *env
	once sync.Once
	env  delivery.Env
	err  error
}

func (r *loopRuns) runEnv() (delivery.Env, error) {
	r.once.Do(func() { r.env, r.err = runEnv(r.e) })
	return r.env, r.err
}

// Advance implements loop.Runs.
func (r *loopRuns) Advance(ctx context.Context, id string) error {
	env, err := r.runEnv()
	if err != nil {
		return err
	}
	if err := sandboxCommands(&env, false); err != nil { // the settings' "sandbox", or the run's recorded one
		return err
	}
	if rep, _ := delivery.Status(env, id); rep != nil && rep.State == delivery.StateInterrupted {
		_, err = delivery.Resume(ctx, env, id)
		return err
	}
	_, err = delivery.Next(ctx, env, id)
	return err
}

// State implements loop.Runs.
func (r *loopRuns) State(id string) (loop.RunState, error) {
	env, err := r.runEnv()
	if err != nil {
		return loop.RunState{}, err
	}
	rep, err := delivery.Status(env, id)
	if rep == nil {
		return loop.RunState{}, err
	}
	st := loop.RunState{State: rep.State, Stage: rep.Stage,
		DeliveryReady: rep.Stage == delivery.StageDeliveryReady && rep.Delivery != nil && rep.Delivery.Ready}
	switch {
	case rep.State == delivery.StateWaitingForHuman && rep.Waiting != nil:
		w := rep.Waiting
		st.Person = fmt.Sprintf("%s at %s", w.Kind, w.Stage)
		if w.Gate != "" {
			st.Person = fmt.Sprintf("gate %s on %s (digest %s): rein run approve %s --gate %s --digest %s, or rein run reject", w.Gate, w.Path, w.Digest, id, w.Gate, w.Digest)
		}
	case rep.State == delivery.StateWaitingForHuman:
		st.Person = "see rein run status " + id
	case rep.State == delivery.StateBlocked && len(rep.Blockers) > 0:
		b := rep.Blockers[0]
		st.Person = fmt.Sprintf("blocker %s: %s", b.Code, b.Detail)
	case rep.State == delivery.StateBlocked:
		st.Person = "the run is blocked: see rein run status " + id
	}
	return st, nil
}
