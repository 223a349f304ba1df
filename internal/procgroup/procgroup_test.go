package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCancelKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 30 & echo $! > "+pidFile+"; wait")
	killed := Own(cmd, time.Second)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for pid == 0 { // the grandchild's pid appears once sh has started it
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	_ = cmd.Wait()
	if !killed() {
		t.Error("killed() = false after cancellation")
	}
	// SIGKILL is delivered asynchronously: wait (bounded) until the grandchild is gone or a
	// zombie waiting to be reaped by init.
	for i := 0; ; i++ {
		if !alive(pid) {
			return
		}
		if i == 1000 {
			t.Fatalf("grandchild %d survived the group kill", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z")
}
