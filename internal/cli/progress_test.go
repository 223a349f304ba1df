//go:build linux

package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/reinhq/rein/internal/cli"
	ct "github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// pty is a pseudo-terminal: the program writes to tty (a terminal, as isatty sees it); the
// test reads everything written from the other side.
type pty struct {
	tty  *os.File
	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(req uintptr, arg unsafe.Pointer) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), req, uintptr(arg)); e != 0 {
			t.Fatalf("ioctl %#x: %v", req, e)
		}
	}
	var unlock int32
	ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	var n uint32
	ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n))
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	size := [4]uint16{24, 120, 0, 0} // rows, columns
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&size))); e != 0 {
		t.Fatal(e)
	}
	p := &pty{tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); m.Close() })
	return p
}

// text is what the terminal received so far, with the line discipline's \r\n as \n.
func (p *pty) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.ReplaceAll(p.seen.String(), "\r\n", "\n")
}

// all closes the terminal side and returns everything it received.
func (p *pty) all() string {
	p.tty.Close()
	<-p.done
	return p.text()
}

// waitFor waits until the terminal received s (the test asserts what shows, not how fast).
func (p *pty) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(p.text(), s) {
			return
		}
	}
	t.Fatalf("the terminal never showed %q:\n%q", s, p.text())
}

const progressScenario = "version: 1\nturns:\n  - text: Looking first.\n    calls: [{name: bash, id: b1, args: {command: \"echo hi\"}}, {name: read, id: r1, args: {path: missing.txt}}]\n  - text: Done looking.\n"

// TestPrintProgressOnATerminal: `rein -p` with stderr on a terminal prints each tool call as
// it starts (and how a failed one failed) and a status line, which it takes away before the
// answer; stdout gets the answer alone.
func TestPrintProgressOnATerminal(t *testing.T) {
	dir, _ := cleanEnv(t)
	t.Chdir(dir)
	if err := os.WriteFile("s.yaml", []byte(progressScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	term := openPTY(t)
	var stdout bytes.Buffer
	code := cli.Main(context.Background(), []string{"--script", "s.yaml", "-p", "look"}, strings.NewReader(""), &stdout, term.tty)
	shown := term.all()
	if code != 0 || stdout.String() != "Done looking.\n" {
		t.Fatalf("exit %d, stdout %q; terminal:\n%q", code, stdout.String(), shown)
	}
	for _, want := range []string{"⏺ bash echo hi\n", "⏺ read missing.txt\n", "  ✗ read: ", "rein · turn 1 · "} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, shown)
		}
	}
	if !strings.Contains(shown, " tokens · $0.0000 · ") {
		t.Errorf("the status line lacks tokens and cost:\n%q", shown)
	}
	if !strings.HasSuffix(shown, "\r\x1b[K") {
		t.Errorf("the status line is left on the screen at the end:\n%q", shown)
	}
}

// TestPrintProgressQuietAndPiped: with --quiet, or with stderr a pipe, a print-mode run writes
// nothing to stderr.
func TestPrintProgressQuietAndPiped(t *testing.T) {
	dir, _ := cleanEnv(t)
	t.Chdir(dir)
	if err := os.WriteFile("s.yaml", []byte(progressScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	term := openPTY(t)
	var stdout bytes.Buffer
	code := cli.Main(context.Background(), []string{"--script", "s.yaml", "--quiet", "-p", "look"}, strings.NewReader(""), &stdout, term.tty)
	if shown := term.all(); code != 0 || shown != "" || stdout.String() != "Done looking.\n" {
		t.Errorf("--quiet: exit %d, stdout %q, terminal %q", code, stdout.String(), shown)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	code = cli.Main(context.Background(), []string{"--script", "s.yaml", "-p", "look"}, strings.NewReader(""), &stdout, w)
	w.Close()
	piped, _ := io.ReadAll(r)
	if code != 0 || len(piped) != 0 || stdout.String() != "Done looking.\n" {
		t.Errorf("stderr a pipe: exit %d, stdout %q, stderr %q", code, stdout.String(), piped)
	}
}

// TestPrintProgressRetryCountdown: a failed model call shows its attempt, the reason and the
// seconds until the retry on the status line.
func TestPrintProgressRetryCountdown(t *testing.T) {
	dir, _ := cleanEnv(t)
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "2")
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ct.SSE(ct.Role, ct.Content("Fine now."), ct.Finish("stop")))
	}))
	t.Cleanup(srv.Close)
	t.Chdir(dir)
	term := openPTY(t)
	var stdout bytes.Buffer
	code := cli.Main(context.Background(), []string{"--provider", "openai-compat", "--base-url", srv.URL, "--model", "m", "--api-key", "k",
		"--no-tools", "--max-retries", "1", "-p", "hi"}, strings.NewReader(""), &stdout, term.tty)
	shown := term.all()
	if code != 0 || stdout.String() != "Fine now.\n" {
		t.Fatalf("exit %d, stdout %q; terminal:\n%q", code, stdout.String(), shown)
	}
	if !strings.Contains(shown, "attempt 1 rate_limit 429, retry in 2s") {
		t.Errorf("the status line shows no retry countdown:\n%q", shown)
	}
}

// TestPrintProgressInterruptShowsPartialText: Ctrl-C while the answer streams prints the text
// that came so far, then the abort message.
func TestPrintProgressInterruptShowsPartialText(t *testing.T) {
	dir, _ := cleanEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ct.Role+ct.Content("The answer is"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	t.Cleanup(srv.Close)
	t.Chdir(dir)
	term := openPTY(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	codes := make(chan int, 1)
	go func() {
		codes <- cli.Main(ctx, []string{"--provider", "openai-compat", "--base-url", srv.URL, "--model", "m", "--api-key", "k",
			"--no-tools", "--max-retries", "0", "-p", "hi"}, strings.NewReader(""), &stdout, term.tty)
	}()
	term.waitFor(t, "writing")
	cancel()
	code := <-codes
	shown := term.all()
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want %d; terminal:\n%q", code, cli.ExitInterrupted, shown)
	}
	partial := strings.Index(shown, "\r\x1b[KThe answer is\n[interrupted]\n")
	abort := strings.LastIndex(shown, "rein: ")
	if partial < 0 || abort < partial {
		t.Errorf("want the partial text (at %d) before the abort message (at %d):\n%q", partial, abort, shown)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q: a partial answer is no answer", stdout.String())
	}
}
