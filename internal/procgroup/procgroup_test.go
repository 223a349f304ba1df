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
	// The grandchild is gone (or a zombie about to be reaped by init): signal 0 fails, or
	// /proc shows it dead.
	if err := syscall.Kill(pid, 0); err == nil {
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(stat), ") Z") {
			t.Errorf("grandchild %d survived the group kill", pid)
		}
	}
}
