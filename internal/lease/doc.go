// Package lease names the one process that works on a durable record (a delivery run, a
// loop) at a time: a small JSON file created with O_EXCL before the work starts and removed
// when it ends. A lease left behind names a process that died; [Read] tells a live holder
// from a dead one by pid and process start time (on Linux /proc/PID/stat field 22), so a
// later process reusing the pid is never taken for the holder. A holder on another host
// cannot be checked and counts as live.
//
// [Acquire] refuses while a live process holds the lease ([ErrHeld], wrapped in a
// [*HeldError] naming it), takes over a dead holder's lease (returning it, so that the caller
// records the takeover) and fsyncs the new lease before returning. Readers ([Read]) never
// write.
package lease
