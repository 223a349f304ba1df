package filelock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHoldExcludes: a held lock file makes a second holder wait until the first closes it,
// and another descriptor's non-blocking attempt fails with EWOULDBLOCK meanwhile.
func TestHoldExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the lock file: %v %v, want mode 0600", fi, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Flock(f, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a second exclusive lock while held: %v, want EWOULDBLOCK", err)
	}
	got := make(chan error, 1)
	go func() {
		second, err := Hold(path)
		if err == nil {
			err = second.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second holder did not wait for the first: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the second holder after the first let go: %v", err)
	}
	if err := Flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatalf("a shared lock once nobody holds it: %v", err)
	}
}

// TestHoldReleasedWhenTheHolderDies: a process killed while it holds the lock leaves it free.
func TestHoldReleasedWhenTheHolderDies(t *testing.T) {
	if os.Getenv("FILELOCK_CHILD") != "" {
		if _, err := Hold(os.Getenv("FILELOCK_CHILD")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldReleasedWhenTheHolderDies$")
	cmd.Env = append(os.Environ(), "FILELOCK_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf), "held") {
		cmd.Process.Kill()
		t.Fatalf("the child did not take the lock: %q %v", buf, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Flock(f, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("while the child holds it: %v, want EWOULDBLOCK", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := Flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
}
