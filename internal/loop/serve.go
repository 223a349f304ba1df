package loop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// Defaults of [ServeOptions].
const (
	DefaultPoll     = time.Second
	DefaultDebounce = 2 * time.Second
)

// ServeOptions are the inputs of [Serve].
type ServeOptions struct {
	// Listen is the webhook's address, a loopback IP and a port ("127.0.0.1:8731"; port 0
	// picks one); "" serves no webhook.
	Listen string
	// Poll is the time between a watch trigger's snapshots (0: DefaultPoll); Debounce the
	// quiet spell after the last change before a burst fires (0: DefaultDebounce).
	Poll, Debounce time.Duration
	// Ready, when set, is called once everything listens or watches.
	Ready func(Serving)

	onRebase func() // tests: the watcher took a new baseline after a round
}

// Serving says what [Serve] listens to.
type Serving struct {
	Trigger   Trigger
	Webhook   string // the webhook's URL, or ""
	TokenFile string // the file holding the webhook's bearer token, or ""
}

// firingRequest is one firing on its way to the scheduler; the disposition recorded for it is
// sent on reply (buffered).
type firingRequest struct {
	f     Firing
	reply chan string
}

// server runs the rounds of one served loop: one scheduler goroutine owns what runs.
type server struct {
	env   Env
	id    string
	l     *ledger.Ledger
	fire  chan firingRequest
	stop  chan struct{} // closed when the scheduler ends
	epoch atomic.Int64  // bumped at every round's start and end (the watcher rebases)
	busy  atomic.Bool   // a round runs
}

// Serve holds loop id's lease and runs a round whenever a trigger fires — the contract's
// watch or every trigger, and the webhook when o.Listen is set — until the loop is in a
// state other than ready (it needs a person, or it is finished) or ctx ends. A firing while a
// round runs is queued once: however many arrive, exactly one more round follows. Every
// firing is recorded (loop.trigger) with its disposition before anything acts on it.
func Serve(ctx context.Context, env Env, id string, o ServeOptions) (string, error) {
	v, err := readView(env.Home, id)
	if err != nil {
		return "", err
	}
	trig := v.Started.Trigger
	if o.Listen == "" && trig.Kind != TriggerWatch && trig.Kind != TriggerEvery {
		return "", fmt.Errorf("%w: loop %s's trigger is %s: nothing but a webhook could fire it; give --listen 127.0.0.1:PORT", ErrTrigger, id, trig)
	}
	var ln net.Listener
	if o.Listen != "" {
		if ln, err = listenLoopback(o.Listen); err != nil {
			return "", err
		}
		defer ln.Close()
	}
	err = withLease(env, id, "serve", func(l *ledger.Ledger) error {
		s := &server{env: env, id: id, l: l, fire: make(chan firingRequest), stop: make(chan struct{})}
		return s.serve(ctx, ln, o)
	})
	if v, verr := readView(env.Home, id); verr == nil {
		return v.State, err
	}
	return "", err
}

// serve settles what must hold before any round, starts the sources and schedules. Every
// source has ended when it returns.
func (s *server) serve(ctx context.Context, ln net.Listener, o ServeOptions) error {
	v, err := readView(s.env.Home, s.id)
	if err != nil {
		return err
	}
	if ok, err := precheck(ctx, s.env, s.l, v); err != nil || !ok {
		return err
	}
	info := Serving{Trigger: v.Started.Trigger}
	var w *watcher
	if v.Started.Trigger.Kind == TriggerWatch {
		if w, err = newWatcher(v.Started.Workspace, s.env.Home, v.Started.Trigger.Paths, cmpDur(o.Debounce, DefaultDebounce)); err != nil {
			return err
		}
		defer w.close()
	}
	if ln != nil {
		stopHTTP, url, file, err := s.webhook(ln)
		if err != nil {
			return err
		}
		defer stopHTTP()
		info.Webhook, info.TokenFile = url, file
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	sources := make(chan error, 2)
	switch {
	case w != nil:
		wg.Go(func() { sources <- s.watch(ctx, w, cmpDur(o.Poll, DefaultPoll), v.Started.Trigger, o.onRebase) })
	case v.Started.Trigger.Kind == TriggerEvery:
		wg.Go(func() { sources <- s.every(ctx, v) })
	}
	if o.Ready != nil {
		o.Ready(info)
	}
	return s.schedule(ctx, sources)
}

// served is how one round of a served loop ended.
type served struct {
	state string
	err   error
}

// schedule is the one goroutine that records firings and starts rounds: idle, a firing runs
// a round; while one runs, the first firing queues one more and later ones join it.
func (s *server) schedule(ctx context.Context, sources <-chan error) error {
	defer close(s.stop)
	done := make(chan served, 1)
	running, queued := false, false
	var waiting Firing // the firing that queued the next round, while queued
	// finish ends serving; a round still queued is recorded dropped, with why.
	finish := func(err error, why string) error {
		if running {
			<-done // the round sees ctx too; cut short, it stays open for the next run to close
			why += " while the round it waited for ran"
		}
		if queued {
			d := Firing{Kind: waiting.Kind, At: s.env.now(), Source: waiting.Source, Disposition: FiringDropped, Reason: why}
			if _, aerr := s.l.Append(ledger.Entry{Kind: KindTrigger, Body: d}); aerr != nil {
				return errors.Join(err, aerr)
			}
		}
		return err
	}
	start := func() {
		running = true
		s.busy.Store(true)
		s.epoch.Add(1)
		go func() {
			st, err := s.round(ctx)
			done <- served{st, err}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return finish(ctx.Err(), "serve was stopped")
		case err := <-sources:
			if err == nil {
				err = ctx.Err()
			}
			return finish(err, "serve's trigger source ended")
		case r := <-s.fire:
			switch {
			case !running:
				r.f.Disposition = FiringRun
			case !queued:
				r.f.Disposition, queued, waiting = FiringQueued, true, r.f
			default:
				r.f.Disposition = FiringCoalesced
			}
			if _, err := s.l.Append(ledger.Entry{Kind: KindTrigger, Body: r.f}); err != nil {
				return finish(err, "recording a firing failed: "+err.Error())
			}
			r.reply <- r.f.Disposition
			if !running {
				start()
			}
		case res := <-done:
			running = false
			s.busy.Store(false)
			s.epoch.Add(1)
			switch {
			case res.err != nil:
				return finish(res.err, "the round it waited for failed: "+res.err.Error())
			case res.state != StateReady:
				return finish(nil, s.endedWhy(res.state))
			}
			if queued {
				queued = false
				start()
			}
		}
	}
}

// endedWhy says why a round queued behind one that ended in state never runs.
func (s *server) endedWhy(state string) string {
	why := "the round it waited for ended " + state
	if v, err := readView(s.env.Home, s.id); err == nil && v.Reason != "" {
		why += " (" + v.Reason + ")"
	}
	return why + ": serve ends, and no round runs until the loop is ready again"
}

// round runs one round of the served loop, after the checks every round has.
func (s *server) round(ctx context.Context) (string, error) {
	v, err := readView(s.env.Home, s.id)
	if err != nil {
		return "", err
	}
	ok, err := precheck(ctx, s.env, s.l, v)
	if err != nil || !ok {
		v, _ = readView(s.env.Home, s.id)
		return v.State, err
	}
	return nextRound(ctx, s.env, s.l, v)
}

// submit hands a firing to the scheduler and returns its recorded disposition.
func (s *server) submit(ctx context.Context, f Firing) (string, error) {
	r := firingRequest{f: f, reply: make(chan string, 1)}
	select {
	case s.fire <- r:
	case <-s.stop:
		return "", errServeEnded
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case d := <-r.reply:
		return d, nil
	case <-s.stop:
		return "", errServeEnded
	}
}

var errServeEnded = errors.New("the loop is no longer served")

// every fires on the schedule: at once when the last round is a period ago (or none ran),
// then every period; a firing while a round runs is queued by the scheduler.
func (s *server) every(ctx context.Context, v *view) error {
	d, _ := time.ParseDuration(v.Started.Trigger.Every)
	due := s.env.now()
	if v.Rounds > 0 && v.LastRoundAt.Add(d).After(due) {
		due = v.LastRoundAt.Add(d)
	}
	for {
		if wait := due.Sub(s.env.now()); wait > 0 {
			if err := s.env.sleep(ctx, wait); err != nil {
				return nil // ctx ended: the scheduler returns its error
			}
		}
		f := Firing{Kind: TriggerEvery, At: s.env.now(), Source: v.Started.Trigger.String()}
		if _, err := s.submit(ctx, f); err != nil {
			return nil
		}
		due = due.Add(d)
		if now := s.env.now(); due.Before(now) {
			due = now.Add(d) // missed periods do not pile up
		}
	}
}

// watch polls the watched paths and fires when a burst of changes is over. While a round
// runs, changes are the round's own writes: they never fire, and the watcher takes a new
// baseline once the round has ended.
func (s *server) watch(ctx context.Context, w *watcher, poll time.Duration, t Trigger, rebased func()) error {
	seen := s.epoch.Load()
	for {
		if err := sleepCtx(ctx, poll); err != nil {
			return nil
		}
		if e := s.epoch.Load(); s.busy.Load() || e != seen {
			if !s.busy.Load() {
				if err := w.rebase(); err != nil {
					return err
				}
				seen = e
				if rebased != nil {
					rebased()
				}
			}
			continue
		}
		changed, err := w.poll(s.env.now())
		if err != nil {
			return err
		}
		if len(changed) == 0 || s.epoch.Load() != seen {
			continue
		}
		f := Firing{Kind: TriggerWatch, At: s.env.now(), Source: t.String(), Paths: changed}
		if len(changed) > maxFiringPaths {
			f.Paths, f.MorePaths = changed[:maxFiringPaths], len(changed)-maxFiringPaths
		}
		if _, err := s.submit(ctx, f); err != nil {
			return nil
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func cmpDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
