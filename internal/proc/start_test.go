package proc

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartEchoesAndStops(t *testing.T) {
	p, err := Start(context.Background(), Spec{Path: "cat", Contain: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin, "hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("read %q, %v; want the line back", line, err)
	}
	res := p.Stop(10 * time.Second)
	if res.Outcome != Exited || res.Code != 0 {
		t.Fatalf("cat after its input closed: %s, want exit status 0", res)
	}
	if again := p.Stop(time.Second); again.Outcome != Exited {
		t.Fatalf("second Stop: %s", again)
	}
}

func TestStartKillsAServerThatIgnoresItsInput(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	// The server ignores EOF and leaves a background child: Stop kills it after the grace,
	// and Contain ends the child.
	p, err := Start(context.Background(), Spec{Path: "sh", Args: []string{"sh", "-c", "sleep 1000 & echo $! > " + pidFile + "; exec sleep 1000"}, Contain: true})
	if err != nil {
		t.Fatal(err)
	}
	child := waitPid(t, pidFile)
	res := p.Stop(50 * time.Millisecond)
	if res.Outcome != Canceled {
		t.Fatalf("Stop of a server ignoring its input: %s, want canceled", res)
	}
	assertGone(t, child, "the server's background child")
	assertGone(t, p.Pid, "the server")
}

func TestStartCrashGivesEOF(t *testing.T) {
	p, err := Start(context.Background(), Spec{Path: "sleep", Args: []string{"sleep", "1000"}, Contain: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Stdout.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the crash: %d, %v; want EOF", n, err)
	}
	<-p.Done()
	if res := p.Result(); res.Outcome != Signaled || res.Signal != syscall.SIGKILL {
		t.Fatalf("crashed process: %s, want signal: killed", res)
	}
}

func TestStartFailureIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	_, err := Start(context.Background(), Spec{Path: missing})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Start of a missing program: %v, want an error naming it", err)
	}
	if _, err := Start(context.Background(), Spec{Path: "cat", Stdin: os.Stdin}); err == nil {
		t.Fatal("Start with a Stdin of its own: no error")
	}
}
