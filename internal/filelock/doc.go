// Package filelock is rein's one use of flock(2): advisory locks on open files that the kernel
// releases when the holder's descriptor closes or the holder dies, SIGKILL included.
//
// [Flock] takes (or drops) a lock on an open file, retrying a call an arriving signal
// interrupted; the ledger's single-writer lock and the sandbox's placeholder holders use it
// on descriptors they opened themselves. [Exclusive] opens (creating, 0600) a lock file and
// waits for its exclusive lock: the short critical sections of rein's shared files in the
// home directory (trust.json).
//
// A lock is advisory: it orders rein processes, not other programs. On NFS it is only as
// good as the server's lock support.
package filelock
