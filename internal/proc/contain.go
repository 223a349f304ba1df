package proc

import (
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
)

// Ended is a process that rein ended because it outlived the run that started it (or the
// rein process that did).
type Ended struct {
	Pid  int
	Name string // the command name, as the kernel has it (at most 15 bytes)
}

func (e Ended) String() string { return fmt.Sprintf("%s (pid %d)", e.Name, e.Pid) }

// selector says which processes a sweep ends (together with every process below them).
type selector struct {
	// tags selects by the tags in the environment.
	tags tagMatch
	// since is the earliest start time (clock ticks since boot) of a process that can carry
	// one of the tags: a tag is made for a process and inherited from it, so nothing that
	// started before that process has it. The environment of older processes is not read,
	// which keeps a sweep to one small read per process on a busy machine. 0: no bound.
	since uint64
	// groups selects the members of process groups (by id) that are in the group's session
	// and started no earlier than the group's leader: a group id is not reused while the
	// group has members, and a new group under a reused id is in the same session only by
	// a rare chance.
	groups map[int]group
	// orphans, when set, also selects rein's own children that are no live run's process
	// (orphans it adopted as subreaper) and carry no tag of this rein process; it reports
	// whether a pid is a live run's.
	orphans func(pid int) bool
	// below limits the sweep to this process's subtree (see candidates): set for the runs of
	// a subreaper, whose every descendant is below it. A dead rein's leftovers ([Reap]) are
	// not: they were reparented elsewhere.
	below bool
}

// group names a process group: its leader's start time and its session.
type group struct {
	start uint64
	sid   int
}

// live is the registry of the processes Run started and has not yet reaped. Starting a
// process and registering it happen under its lock, and so does everything that waits for
// or sweeps rein's children by elimination (the subreaper's reaper, an orphan sweep), so
// neither can take a process of a run for an orphan.
var live = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// subreaping is set once [Subreap] made this process a child subreaper.
var subreaping atomic.Bool

// startRegistered starts cmd and registers its process; the subreaper's reaper is started
// before the first process is.
func startRegistered(cmd *exec.Cmd) error {
	live.Lock()
	defer live.Unlock()
	watchOrphans()
	if err := cmd.Start(); err != nil {
		return err
	}
	live.pids[cmd.Process.Pid] = true
	return nil
}

// finishContained sweeps what a contained run left and unregisters its process. As
// subreaper, and when no other run is in flight, it also ends orphans of unknown origin: no
// other run can have made them.
func finishContained(pid int, sel selector) []Ended {
	live.Lock()
	defer live.Unlock()
	delete(live.pids, pid)
	if subreaping.Load() && len(live.pids) == 0 {
		sel.orphans = func(p int) bool { return live.pids[p] }
	}
	return sweep(sel)
}

func unregister(pid int) {
	live.Lock()
	defer live.Unlock()
	delete(live.pids, pid)
}
