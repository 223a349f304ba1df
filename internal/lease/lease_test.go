package lease

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestAcquireRefusesLiveAndTakesOverDead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lease.json")
	stale, release, err := Acquire(path, "run", time.Now())
	if err != nil || stale != nil {
		t.Fatalf("first acquire: %v, stale %v", err, stale)
	}
	_, _, err = Acquire(path, "run", time.Now())
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) || held.Holder.PID != os.Getpid() {
		t.Fatalf("second acquire while this process holds it: %v", err)
	}
	release()
	if st, _ := Read(path); st != nil {
		t.Fatal("release left the lease")
	}
	// A lease whose process has exited is taken over and returned.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	host, _ := os.Hostname()
	data, _ := json.Marshal(Lease{PID: cmd.Process.Pid, StartTime: "1", Host: host, Command: "run"})
	os.WriteFile(path, data, 0o600)
	if st, _ := Read(path); st == nil || st.Live {
		t.Fatalf("a dead holder reads as %+v", st)
	}
	stale, release, err = Acquire(path, "run", time.Now())
	if err != nil || stale == nil || stale.PID != cmd.Process.Pid {
		t.Fatalf("takeover: %v, stale %+v", err, stale)
	}
	release()
}
