package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// procInfo is what /proc/<pid>/stat says about a process.
type procInfo struct {
	pid, ppid, pgid, sid int
	// start is the start time in clock ticks since boot: with pid, it names one process
	// (a pid is reused, never with the same start time).
	start  uint64
	name   string
	zombie bool
}

// readStat reads /proc/<pid>/stat; false when the process is gone or the file is unreadable.
// A sweep reads it for every process on the machine, so it reads into a stack buffer with
// three system calls (os.ReadFile takes five and allocates).
func readStat(pid int) (procInfo, bool) {
	var path [32]byte
	var buf [1024]byte
	name := append(strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10), "/stat\x00"...)
	fdcwd := atFDCWD
	r, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(fdcwd), uintptr(unsafe.Pointer(&name[0])),
		syscall.O_RDONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return procInfo{}, false
	}
	fd := int(r)
	n, err := readFull(fd, buf[:])
	syscall.Close(fd)
	if err != nil {
		return procInfo{}, false
	}
	return parseStat(pid, buf[:n])
}

// atFDCWD is AT_FDCWD: a relative path would be taken from the working directory.
const atFDCWD = -100

// readFull reads fd until EOF or a full buffer.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// parseStat parses the content of /proc/<pid>/stat.
func parseStat(pid int, s []byte) (procInfo, bool) {
	open, closing := bytes.IndexByte(s, '('), bytes.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procInfo{}, false
	}
	// After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime …
	var f [20][]byte
	rest := s[closing+1:]
	for i := range f {
		rest = bytes.TrimLeft(rest, " \n")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return procInfo{}, false
		}
		f[i], rest = rest[:end], rest[end:]
	}
	state := string(f[0])
	p := procInfo{pid: pid, name: string(s[open+1 : closing]), zombie: state == "Z" || state == "X"}
	var ok [4]bool
	p.ppid, ok[0] = atoi(f[1])
	p.pgid, ok[1] = atoi(f[2])
	p.sid, ok[2] = atoi(f[3])
	var start int
	start, ok[3] = atoi(f[19])
	p.start = uint64(start)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return procInfo{}, false
	}
	return p, true
}

// atoi parses a decimal number without allocating (ppid and tty fields can be 0; none is
// negative but tpgid, which is not parsed).
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// selfStart is the start time of this process; 0 when /proc cannot say.
func selfStart() uint64 {
	p, _ := readStat(os.Getpid())
	return p.start
}

// running reports whether the process pid with start time start still runs (a zombie does
// not).
func running(pid int, start uint64) bool {
	p, ok := readStat(pid)
	return ok && p.start == start && !p.zombie
}

// table lists every process /proc shows.
func table() []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var ps []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readStat(pid); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// taskChildren appends to pids the children of process pid, from /proc/PID/task/*/children
// (a child is listed under the thread that started it, or that it was reparented to). false
// when the process is gone or the kernel has no children files.
func taskChildren(pid int, pids []int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return pids, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && t.Name() != strconv.Itoa(pid) {
				continue // a thread that ended meanwhile
			}
			return pids, false
		}
		for len(data) > 0 {
			field := data
			if i := bytes.IndexByte(data, ' '); i >= 0 {
				field, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if c, ok := atoi(bytes.TrimSpace(field)); ok && c > 0 {
				pids = append(pids, c)
			}
		}
	}
	return pids, true
}

// subtree lists every process below process self (not self), parents before their children;
// false when the kernel cannot list children (the caller reads the whole table instead).
func subtree(self int) ([]procInfo, bool) {
	queue, ok := taskChildren(self, nil)
	if !ok {
		return nil, false
	}
	seen := map[int]bool{self: true}
	var ps []procInfo
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		p, ok := readStat(pid)
		if !ok {
			continue // gone meanwhile
		}
		ps = append(ps, p)
		queue, _ = taskChildren(pid, queue)
	}
	return ps, true
}

// candidates lists the processes a sweep looks at. With below set (this process is a child
// subreaper and the sweep is for one of its runs) that is this process's subtree: a process
// that descends from a run stays below rein, because an orphan is reparented to the nearest
// subreaper, not to init. Otherwise, or where the kernel cannot list children, it is every
// process /proc shows.
func candidates(below bool, self int) []procInfo {
	if below {
		if ps, ok := subtree(self); ok {
			return ps
		}
	}
	return table()
}

// tagsOf reads the tags in a process's environment (nil when it cannot be read: another
// user's process, or a zombie).
func tagsOf(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil
	}
	return tagsIn(data)
}

// sweep ends every process sel selects and everything below those: it stops them with
// SIGSTOP round by round until a round finds none it has not stopped (a stopped process
// cannot fork, so its children stay below it where the next round finds them), then kills
// every one with SIGKILL. It returns what it ended.
func sweep(sel selector) []Ended {
	self := os.Getpid()
	type key struct {
		pid   int
		start uint64
	}
	stopped := map[key]procInfo{}
	var order []key
	for round := 0; round < maxSweepRounds; round++ {
		fresh := 0
		for _, p := range sel.pick(candidates(sel.below, self), self) {
			k := key{p.pid, p.start}
			if _, ok := stopped[k]; ok {
				continue
			}
			if signalExact(p, syscall.SIGSTOP) != nil {
				continue // gone already, or not ours to signal
			}
			stopped[k] = p
			order = append(order, k)
			fresh++
		}
		if fresh == 0 {
			break
		}
	}
	var ended []Ended
	for _, k := range order {
		p := stopped[k]
		if signalExact(p, syscall.SIGKILL) == nil {
			ended = append(ended, Ended{Pid: p.pid, Name: p.name})
		}
	}
	return ended
}

// maxSweepRounds bounds the stopping rounds of a sweep (a process that forks faster than
// rounds run is still stopped: each round stops every child it finds).
const maxSweepRounds = 64

// pick returns the live processes of ps that sel selects, and every process below them.
func (sel selector) pick(ps []procInfo, self int) []procInfo {
	children := map[int][]procInfo{}
	for _, p := range ps {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var picked []procInfo
	seen := map[int]bool{self: true}
	var add func(p procInfo)
	add = func(p procInfo) {
		if seen[p.pid] {
			return
		}
		seen[p.pid] = true
		if !p.zombie {
			picked = append(picked, p)
		}
		for _, c := range children[p.pid] {
			add(c)
		}
	}
	for _, p := range ps {
		if !p.zombie && p.pid != self && sel.selects(p, self) {
			add(p)
		}
	}
	return picked
}

// selects reports whether p itself is one of sel's processes.
func (sel selector) selects(p procInfo, self int) bool {
	if g, ok := sel.groups[p.pgid]; ok && p.sid == g.sid && p.start >= g.start {
		return true
	}
	// An orphan of unknown origin that came to rein as subreaper: what no run tagged
	// (its environment was cleared) and no run started directly.
	orphan := sel.orphans != nil && p.ppid == self && !sel.orphans(p.pid)
	if p.start < sel.since && !orphan {
		return false // too old to carry the tags, and no orphan: its environment is not read
	}
	tags := tagsOf(p.pid)
	if sel.tags.selects(tags) {
		return true
	}
	return orphan && !ownedBy(tags, selfID())
}

// signalExact sends sig to the process p names, only if that pid still is that process
// (same start time): through a pidfd, so the pid cannot be reused between check and signal.
func signalExact(p procInfo, sig syscall.Signal) error {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(p.pid), 0, 0)
	if errno == syscall.ENOSYS {
		// Kernels before 5.3: check, then signal (a pid reused in between is a narrow race).
		if !running(p.pid, p.start) {
			return syscall.ESRCH
		}
		return syscall.Kill(p.pid, sig)
	}
	if errno != 0 {
		return errno
	}
	defer syscall.Close(int(fd))
	if q, ok := readStat(p.pid); !ok || q.start != p.start {
		return syscall.ESRCH
	}
	if _, _, errno := syscall.Syscall6(sysPidfdSendSignal, fd, uintptr(sig), 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// The pidfd system calls have the same numbers on every architecture.
const (
	sysPidfdSendSignal = 424
	sysPidfdOpen       = 434
)

// exitWatch reports when the process pid exits, without reaping it (exec.Cmd does that):
// the pidfd is opened at once, while the process cannot have been reaped yet, so it names
// exactly that process. nil when the kernel has no pidfd.
func exitWatch(pid int) <-chan struct{} {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer syscall.Close(int(fd))
		const pPidfd = 3
		var info [128]byte // siginfo_t
		for {
			_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPidfd, fd, uintptr(unsafe.Pointer(&info)),
				syscall.WEXITED|syscall.WNOWAIT, 0, 0)
			if !errors.Is(errno, syscall.EINTR) {
				return
			}
		}
	}()
	return done
}

// groupOf returns the group process pid leads; zero when it cannot be read.
func groupOf(pid int) group {
	p, _ := readStat(pid)
	return group{start: p.start, sid: p.sid}
}
