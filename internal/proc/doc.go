// Package proc is rein's one process runner: the bash tool (internal/tool/shell), approved
// commands (internal/command), command hooks (internal/hooks/command) and the sandbox check
// (internal/sandbox) start every process through [Run].
//
// # Contract
//
//   - The process leads a new process group. When [Spec.Timeout] expires or the context is
//     done, the whole group gets SIGKILL — children, grandchildren and background jobs, not
//     just the first process. With [Spec.KillGroupOnExit] the group is also killed once the
//     process has exited, so nothing it left in its group outlives the run.
//   - Processes that leave the group (setsid, a daemon) are not killed by the group kill.
//   - On Linux the process is started with a parent-death signal (Pdeathsig = SIGKILL): when
//     rein dies, even by SIGKILL, the kernel kills the process. The signal survives exec (so
//     "bash -c 'exec sleep 1000'" dies too) but reaches only the process rein started, not
//     the children it forked: after rein is killed those are reparented and keep running.
//     Killing them is the subject of a later reaper (a subreaper or cgroup that outlives
//     rein's process tree); inside the sandbox, bwrap's --die-with-parent and its PID
//     namespace already take every process in it down. Other systems get no parent-death
//     signal at all. The signal is tied to the OS thread that forked the child, so [Run]
//     keeps its goroutine locked to that thread until the child is reaped.
//   - Once the process is gone, [Run] waits at most [Spec.WaitDelay] for the output pipes to
//     close, so a survivor holding them cannot make it hang.
//   - Every ending is a typed [Result]: [Exited] with the status, [TimedOut] and [Canceled]
//     (the group was killed by Run: the context was done, and it was the caller's context
//     for Canceled, the timeout for TimedOut), [Signaled] by a signal Run did not send,
//     [StartFailed], and [WaitFailed] (the output could not be copied). A process that
//     exits on its own just as the timeout passes is Exited.
//
// [Tail] is the bounded output buffer the callers share: it keeps the last N bytes and the
// count of all of them.
package proc
