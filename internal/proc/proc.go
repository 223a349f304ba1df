package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultWaitDelay is how long [Run] waits for the output pipes to close once the process
// is gone, when [Spec.WaitDelay] is zero.
const DefaultWaitDelay = time.Second

// Spec describes one process to run.
type Spec struct {
	// Path is the program. A name without a "/" is looked up in rein's PATH, as
	// [exec.Command] does; callers that need a fixed PATH resolve the program themselves.
	Path string
	// Args is the whole argument vector, argv[0] included; nil means {Path}.
	Args []string
	// Dir is the working directory; empty means rein's.
	Dir string
	// Env is the environment; nil means rein's (as for [exec.Cmd]).
	Env []string
	// Stdin is the input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the output; nil discards it. Give the same comparable writer
	// to both to merge them through one pipe in arrival order. The writers are called from
	// [exec.Cmd]'s copying goroutines, one call at a time per pipe.
	Stdout, Stderr io.Writer
	// Timeout bounds the run; zero means none. When it expires the whole process group is
	// killed.
	Timeout time.Duration
	// WaitDelay bounds the wait for the output pipes to close once the process is gone (a
	// background child may hold them open); zero means [DefaultWaitDelay].
	WaitDelay time.Duration
	// KillGroupOnExit kills whatever is left of the process group once the process has
	// exited and its pipes are closed (or WaitDelay passed), so nothing it started in its
	// group outlives the run. Without it, background processes of a process that exits on
	// its own keep running.
	KillGroupOnExit bool
	// Contain ends every process the run started once the process has exited (or was
	// killed): its group, and on Linux every process that carries the run's tag ([EnvTag])
	// or lies below one — background jobs, setsid, nohup, double forks and daemons included.
	// What it ended is in [Result.Ended]. It implies KillGroupOnExit.
	Contain bool
	// LeaveRunning marks the run's processes as deliberately left running (a daemon the user
	// asked for): they carry a keep tag instead of the run's, are not in the Journal and are
	// ended by no sweep — not when the run ends, not by [Reap] after rein died. The process
	// itself still gets the group kill on timeout or cancellation and the parent-death
	// signal. It excludes Contain.
	LeaveRunning bool
	// Journal, when set, records the run's process while it runs, so that a later rein can
	// end what it left when this rein dies ([Reap]).
	Journal *Journal
	// Terminal, when it is rein's controlling terminal, is handed to the process: its group
	// is the terminal's foreground group while it runs (an interactive program such as the
	// user's editor reads and sets up the terminal), and the group that had the terminal
	// gets it back when the run ends. Give the same file as Stdin and Stdout. Linux only;
	// elsewhere the process runs in the background group as without it.
	Terminal *os.File
}

// Outcome classifies how a run ended.
type Outcome int

const (
	// Exited: the process exited on its own; [Result.Code] is its status.
	Exited Outcome = iota + 1
	// TimedOut: [Spec.Timeout] expired and the group was killed.
	TimedOut
	// Canceled: the context ended and the group was killed.
	Canceled
	// Signaled: a signal Run did not send ended the process; [Result.Signal] names it.
	Signaled
	// StartFailed: the process could not be started; [Result.Err] says why.
	StartFailed
	// WaitFailed: the process ran and exited, but waiting for it failed (copying its output
	// failed); [Result.Code] is its status and [Result.Err] the failure.
	WaitFailed
)

func (o Outcome) String() string {
	switch o {
	case Exited:
		return "exited"
	case TimedOut:
		return "timed out"
	case Canceled:
		return "canceled"
	case Signaled:
		return "signaled"
	case StartFailed:
		return "failed to start"
	case WaitFailed:
		return "wait failed"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is how a run ended.
type Result struct {
	Outcome Outcome
	// Code is the exit status for Exited and WaitFailed, and -1 otherwise.
	Code int
	// Signal is the signal that ended the process, for Signaled.
	Signal syscall.Signal
	// Err is the cause for StartFailed and WaitFailed, and nil otherwise.
	Err error
	// Pid is the process id (also the process group id); 0 when it did not start.
	Pid int
	// Duration is the time from start to the end of the wait.
	Duration time.Duration
	// Ended lists the processes [Spec.Contain] ended after the process itself was gone.
	Ended []Ended
}

// String describes the ending for a message: "exit status 1", "timed out", "canceled",
// "signal: killed", "failed to start: …", "wait failed: …".
func (r Result) String() string {
	switch r.Outcome {
	case Exited:
		return fmt.Sprintf("exit status %d", r.Code)
	case Signaled:
		return "signal: " + r.Signal.String()
	case StartFailed, WaitFailed:
		return fmt.Sprintf("%s: %v", r.Outcome, r.Err)
	}
	return r.Outcome.String()
}

// Run runs the process described by s as the leader of a new process group and waits for it.
// When s.Timeout expires or ctx is done, the whole group gets SIGKILL. On Linux the process
// also gets SIGKILL when rein dies (see the package documentation for the limits). Run
// never returns an error: every ending, a failure to start included, is a [Result].
func Run(ctx context.Context, s Spec) Result {
	return run(ctx, s, nil)
}

// run is [Run]; started, when not nil, is called with the pid once the process runs (and is
// in the journal), from the goroutine that waits for it.
func run(ctx context.Context, s Spec, started func(pid int)) Result {
	if s.LeaveRunning && s.Contain {
		return Result{Outcome: StartFailed, Code: -1, Err: errors.New("proc: Spec.Contain and Spec.LeaveRunning exclude each other")}
	}
	runCtx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}

	cmd := exec.CommandContext(runCtx, s.Path)
	if s.Args != nil {
		cmd.Args = slices.Clone(s.Args)
	}
	tag := newTag(s.LeaveRunning)
	cmd.Dir, cmd.Env = s.Dir, withTag(s.Env, tag)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	var killed atomic.Bool
	cmd.SysProcAttr = groupAttr()
	defer foreground(cmd.SysProcAttr, s.Terminal)()
	cmd.Cancel = func() error {
		killed.Store(true)
		return killGroup(cmd.Process.Pid)
	}
	cmd.WaitDelay = s.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}

	// The parent-death signal fires when the thread that forked the child ends, not when the
	// process does. Go ends a thread only when a goroutine locked to it returns, so holding
	// this goroutine on its thread until the child is reaped keeps the thread alive.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	if s.Journal != nil && !s.LeaveRunning {
		if err := s.Journal.ready(); err != nil {
			return Result{Outcome: StartFailed, Code: -1, Err: fmt.Errorf("the process was not started: %w", err)}
		}
	}
	start := time.Now()
	if err := startRegistered(cmd); err != nil {
		return Result{Outcome: StartFailed, Code: -1, Err: err}
	}
	pid := cmd.Process.Pid
	// Not reaped before Wait: what is read now is the process's own.
	g := groupOf(pid)
	sel := selector{tags: tagMatch{tag: tag}, groups: map[int]group{pid: g}, since: g.start, below: subreaping.Load()}
	if s.Journal != nil && !s.LeaveRunning {
		if err := s.Journal.add(pid, sel.groups[pid]); err != nil {
			_ = killGroup(pid)
			_ = cmd.Wait()
			finishContained(pid, sel)
			return Result{Outcome: StartFailed, Code: -1, Err: fmt.Errorf("the process was killed at once: %w", err)}
		}
		defer s.Journal.remove(pid)
	}
	if started != nil {
		started(pid)
	}
	// Contained: the moment the process exits, end what it left, so that a survivor
	// holding the output pipe does not keep Wait waiting for WaitDelay.
	var early chan []Ended
	if s.Contain {
		if exited := exitWatch(pid); exited != nil {
			early = make(chan []Ended, 1)
			go func() {
				<-exited
				early <- sweep(sel) // the group too: sel selects it
			}()
		}
	}
	waitErr := cmd.Wait()
	res := Result{Code: -1, Pid: pid, Duration: time.Since(start)}
	if s.Contain {
		if early != nil {
			res.Ended = <-early
		}
		if early != nil {
			// Wait reaped the process, so its pid (the group's id) may be reused by now: the
			// early sweep, made while it could not be, has taken the group.
			sel.groups = nil
		}
		// A process the early sweep killed may not have died yet (SIGKILL takes effect when it
		// is next scheduled): the second sweep can stop and kill it again; it is named once.
		for _, e := range finishContained(pid, sel) {
			if !slices.ContainsFunc(res.Ended, func(o Ended) bool { return o.Pid == e.Pid }) {
				res.Ended = append(res.Ended, e)
			}
		}
	} else {
		unregister(pid)
	}
	if s.KillGroupOnExit || s.Contain {
		_ = killGroup(res.Pid)
	}
	classify(&res, waitErr, killed.Load(), ctx.Err() != nil, cmd.ProcessState)
	return res
}

// classify fills in how the run ended: killed by Run (timeout or cancellation), exited, or
// ended by a signal.
func classify(res *Result, waitErr error, killed, canceled bool, state *os.ProcessState) {
	var ee *exec.ExitError
	switch {
	case killed && canceled:
		res.Outcome = Canceled
	case killed:
		res.Outcome = TimedOut
	case waitErr == nil || errors.Is(waitErr, exec.ErrWaitDelay):
		res.Outcome, res.Code = Exited, state.ExitCode()
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Outcome, res.Signal = Signaled, ws.Signal()
		} else {
			res.Outcome, res.Code = Exited, ee.ExitCode()
		}
	default:
		res.Outcome, res.Err = WaitFailed, waitErr
		if state != nil {
			res.Code = state.ExitCode()
		}
	}
}

// killGroup sends SIGKILL to the process group led by pid. A group already gone is not an
// error.
func killGroup(pid int) error {
	// The process leads its group (Setpgid with Pgid 0), so -pid names the group.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
