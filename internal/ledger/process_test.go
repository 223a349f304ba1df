package ledger_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// Child processes: the test binary re-executes itself with LEDGER_TEST_CHILD set.
//
//	hold <dir>             create a ledger, print "ready", wait to be killed
//	append <dir> <kill>    run osWorkload on dir, killing itself with SIGKILL at filesystem
//	                       operation <kill> (a write is killed after half its bytes); prints
//	                       "ack <seq> <h>" for each acknowledged record
const childEnv = "LEDGER_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(strings.Fields(spec)))
	}
	flag.Parse()
	os.Exit(m.Run())
}

func child(args []string) int {
	switch args[0] {
	case "hold":
		l, err := ledger.Create(args[1], header(), ledger.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer l.Close()
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin) // until killed
		return 0
	case "append":
		killAt, _ := strconv.Atoi(args[2])
		ffs := &ledgertest.FaultFS{FS: ledger.OSFS{}, Inject: func(o ledgertest.Op) *ledgertest.Fault {
			if o.N != killAt {
				return nil
			}
			return &ledgertest.Fault{Written: o.Size / 2, Before: func() {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // never returns
			}}
		}}
		err := osWorkload(args[1], ffs, func(seq int64, h string) { fmt.Printf("ack %d %s\n", seq, h) })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	}
	return 3
}

// osWorkload creates a ledger, appends intents and results (synced) and some bookkeeping, puts
// a blob, reopens it once and appends more; ack reports each acknowledged (durable) record.
func osWorkload(dir string, fsys ledger.FS, ack func(seq int64, h string)) error {
	opts := ledger.Options{FS: fsys}
	l, err := ledger.Create(dir, header(), opts)
	if err != nil {
		return err
	}
	ack(l.Head())
	for i := range 4 {
		body := map[string]any{"i": i}
		if i == 2 {
			digest, err := l.PutBlob([]byte(strings.Repeat("blob", 1000)))
			if err != nil {
				return err
			}
			body["blob"] = digest
		}
		u, err := l.Append(ledger.Entry{Kind: "x-usage", Body: body, NoSync: true})
		if err != nil {
			return err
		}
		r, err := l.Append(ledger.Entry{Kind: "intent", Body: body})
		if err != nil {
			return err
		}
		ack(u.Seq, u.H) // the bookkeeping record became durable with the intent's fsync
		ack(r.Seq, r.H)
	}
	if err := l.Close(); err != nil {
		return err
	}
	l, _, err = ledger.Open(dir, opts)
	if err != nil {
		return err
	}
	r, err := l.Append(ledger.Entry{Kind: "result", Body: "done"})
	if err != nil {
		return err
	}
	ack(r.Seq, r.H)
	return l.Close()
}

func childCmd(t *testing.T, spec string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	return cmd
}

func TestSecondWriterLocked(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Create(dir, header(), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ledger.Open(dir, ledger.Options{})
	var le *ledger.LockedError
	if !errors.Is(err, ledger.ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() ||
		!strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	if _, err := ledger.Verify(dir, ledger.Options{}); err != nil {
		t.Fatalf("readers need no lock: %v", err)
	}
	l.Close()
	l, _, err = ledger.Open(dir, ledger.Options{})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	l.Close()
}

// TestSIGKILLedHolderReleasesLock: a child process holds the lock; a writer here is refused with
// the child's pid; after SIGKILL the lock is free.
func TestSIGKILLedHolderReleasesLock(t *testing.T) {
	dir := t.TempDir()
	cmd := childCmd(t, "hold "+dir)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	_, _, err = ledger.Open(dir, ledger.Options{})
	var le *ledger.LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("want the lock error naming pid %d, got %v", cmd.Process.Pid, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, _, err := ledger.Open(dir, ledger.Options{})
	if err != nil {
		t.Fatalf("after SIGKILL: %v", err)
	}
	l.Close()
}

// TestSIGKILLAtEveryWritePoint runs osWorkload in a child process on the real filesystem and
// SIGKILLs it at a filesystem operation (mid-write for writes); then Open must succeed (or find
// the ledger never created), hold every acknowledged record, and a second Open must change
// nothing. By default a sample of the operations; -ledger.long: every one.
func TestSIGKILLAtEveryWritePoint(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	counter := &ledgertest.FaultFS{FS: ledger.OSFS{}}
	if err := osWorkload(filepath.Join(t.TempDir(), "count"), counter, func(int64, string) {}); err != nil {
		t.Fatal(err)
	}
	total := counter.Ops()
	step := 3
	if *long {
		step = 1
	}
	outcomes := map[string]int{}
	defer func() { t.Logf("%d operations; outcomes: %v", total, outcomes) }()
	for k := 1; k <= total; k += step {
		dir := filepath.Join(t.TempDir(), "s")
		cmd := childCmd(t, fmt.Sprintf("append %s %d", dir, k))
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("op %d of %d: child was not killed: %v", k, total, err)
		}
		acks := map[int64]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var seq int64
			var h string
			if n, _ := fmt.Sscanf(line, "ack %d %s", &seq, &h); n == 2 {
				acks[seq] = h
			}
		}
		l, rep, err := ledger.Open(dir, ledger.Options{})
		if err != nil {
			if len(acks) == 0 && (errors.Is(err, os.ErrNotExist) || errors.Is(err, ledger.ErrIncomplete)) {
				outcomes["never created"]++
				continue
			}
			t.Fatalf("op %d of %d: open after SIGKILL: %v (acks %v)", k, total, err, acks)
		}
		if rep.Torn != nil {
			outcomes["torn tail repaired"]++
		} else {
			outcomes["intact"]++
		}
		for seq, h := range acks {
			if err := l.CheckAnchor(seq, h); err != nil {
				t.Fatalf("op %d: %v", k, err)
			}
		}
		l.Close()
		before, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
		l, rep2, err := ledger.Open(dir, ledger.Options{})
		if err != nil || rep2.Torn != nil || rep2.HeadHash != rep.HeadHash {
			t.Fatalf("op %d: second open: %+v %v", k, rep2, err)
		}
		l.Close()
		after, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
		if string(before) != string(after) {
			t.Fatalf("op %d: second open changed the file", k)
		}
	}
}
