// Package proc is rein's one process runner: the bash tool (internal/tool/shell), approved
// commands (internal/command), command hooks (internal/hooks/command) and the sandbox check
// (internal/sandbox) start every process through [Run]; long-lived servers rein speaks to
// over their standard input and output (MCP servers, internal/mcp) through [Start], which is
// the same run held open: the same group, parent-death signal, tag, Journal and Contain.
//
// # Contract
//
//   - The process leads a new process group. When [Spec.Timeout] expires or the context is
//     done, the whole group gets SIGKILL — children, grandchildren and background jobs, not
//     just the first process. With [Spec.KillGroupOnExit] the group is also killed once the
//     process has exited, so nothing it left in its group outlives the run.
//   - Processes that leave the group (setsid, a daemon) are not killed by the group kill.
//     [Spec.Contain] ends them too (below).
//   - On Linux the process is started with a parent-death signal (Pdeathsig = SIGKILL): when
//     rein dies, even by SIGKILL, the kernel kills the process. The signal survives exec (so
//     "bash -c 'exec sleep 1000'" dies too) but reaches only the process rein started, not
//     the children it forked; those are ended by the next rein ([Reap], below). Inside the
//     sandbox, bwrap's --die-with-parent and its PID namespace already take every process
//     in it down. Other systems get no parent-death signal at all. The signal is tied to the
//     OS thread that forked the child, so [Run] keeps its goroutine locked to that thread
//     until the child is reaped.
//   - Once the process is gone, [Run] waits at most [Spec.WaitDelay] for the output pipes to
//     close, so a survivor holding them cannot make it hang.
//   - Every ending is a typed [Result]: [Exited] with the status, [TimedOut] and [Canceled]
//     (the group was killed by Run: the context was done, and it was the caller's context
//     for Canceled, the timeout for TimedOut), [Signaled] by a signal Run did not send,
//     [StartFailed], and [WaitFailed] (the output could not be copied). A process that
//     exits on its own just as the timeout passes is Exited.
//
// # Nothing outlives rein
//
// Every process Run starts carries a tag in its environment ([EnvTag]: a random id of the
// rein process and the run's number), which everything it starts inherits — through setsid,
// nohup, double forks and daemon(3) alike, which leave the process group but keep the
// environment. A sweep ends a set of processes and everything below them (by parent): it
// stops them with SIGSTOP, round by round, until a round finds none it has not stopped (a
// stopped process cannot fork, so nothing slips out between rounds), then kills each with
// SIGKILL through a pidfd after checking its start time, so a reused pid is never hit.
//
//   - [Spec.Contain] sweeps, the moment the process exits (or is killed), its process group
//     (members that started after it) and every process with the run's tag: what the run
//     started ends with it, and a survivor holding the output pipe does not keep Run
//     waiting. [Result.Ended] names what was ended. Other runs' processes carry other tags
//     and are left alone.
//   - [Subreap] (called by rein's main) makes rein a child subreaper: a process whose parent
//     exits is reparented to rein instead of init. That catches the one escape tags miss: a
//     process that leaves the group and clears its environment (setsid env -i …). When a
//     contained run ends and no other run is in flight, rein's children that are no run's
//     process and carry no tag of this rein are such orphans and are swept too. Because the
//     setting is process-wide, rein must wait for the orphans it adopts: a reaper goroutine,
//     woken by SIGCHLD and started with the first process Run starts, waits (wait4 by pid)
//     only for exited children that are no live run's process — exec.Cmd waits for its own
//     child by pid, and starting a process and registering it happen under the lock the
//     reaper holds, so the reaper never takes a run's child. Subreap is for a process whose
//     every child is started by Run.
//     As subreaper, a sweep for a run looks only at rein's own subtree (read from
//     /proc/PID/task/TID/children): every descendant of a run stays below rein, since an
//     orphan is reparented to the nearest subreaper, so a handful of reads replace one per
//     process on the machine. Without the setting, or where the kernel has no children
//     files, it reads every process. What a daemon outside rein starts on a run's behalf
//     (cron, systemd, a tmux server started elsewhere) is below neither and inherits no tag.
//   - [Journal] records, in $REIN_HOME/procs/<pid>-<start>-<random>.json (replaced
//     atomically, never fsynced: a power loss ends what it names; a rein that starts no
//     process writes none), this rein process (pid and start time), the id in its tags, and each
//     live run's process and group. The file exists, with the id, before the first process
//     starts, so a process that escaped before its run was recorded is still found by its
//     tag. [Reap] reads the journals of rein processes that no longer run (pid and start
//     time), sweeps every process carrying a tracked tag of theirs and the members of their
//     recorded groups (in the group's session, started after its leader), and removes the
//     journal. rein calls it when a run opens, before a resumed session's recovery records
//     an interrupted call. The session is recorded only to tell a reused group id from the
//     run's group: a run's process leads a group, not a session, so the session is rein's
//     own (the terminal's) and is never swept as a whole.
//   - [Spec.LeaveRunning] is the opt-out for a deliberate daemon: the run's processes carry
//     a keep tag, no sweep ends them (neither the run's nor Reap's), and the subreaper's
//     orphan sweep spares them.
//
// Why tags and a subreaper rather than cgroups: a cgroup v2 per run would contain every
// process exactly, but rein can create one only where it owns a delegated writable cgroup
// subtree, which a plain user session or a container usually does not give; the tags work
// for every process of the same user, survive rein's death (the reaper finds them in /proc
// without any state of the dead rein but its id), and need no privileges. What they cannot
// see is a process that clears its environment, leaves the group and is reparented away
// from rein: the subreaper keeps it below rein while rein lives; after rein died it is
// found only if it is still below a process that carries a tag. A process of another user
// (setuid) cannot be signalled and is left. Other systems than Linux have no /proc: there
// Contain is the group kill, and Reap only removes journals of rein processes that are gone.
//
// [Tail] is the bounded output buffer the callers share: it keeps the last N bytes and the
// count of all of them.
package proc
