package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/bench/mock"
)

// Result is what `benchtool run` measures of one process.
type Result struct {
	Cmd      []string `json:"cmd"`
	StartNS  int64    `json:"start_ns"` // just before the process was started
	EndNS    int64    `json:"end_ns"`   // once it was reaped
	WallMS   float64  `json:"wall_ms"`
	UserMS   float64  `json:"user_ms"` // CPU time, the process and the children it waited for
	SysMS    float64  `json:"sys_ms"`
	MaxRSSKB int64    `json:"maxrss_kb"` // peak resident set of the process (or its largest waited-for descendant)
	// AnonKB and FileKB are the largest RssAnon (heap, stacks: private memory) and RssFile
	// (mapped files, mostly the executable's own pages: shared and reclaimable) of the process
	// itself, sampled from /proc every 5 ms.
	AnonKB   int64  `json:"anon_kb"`
	FileKB   int64  `json:"file_kb"`
	Exit     int    `json:"exit"`
	Requests int    `json:"requests"` // model requests the mock served
	Stdout   string `json:"stdout"`   // the first 4 KiB
	Stderr   string `json:"stderr"`   // the last 4 KiB
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("out", "", "result file (JSON)")
	scriptPath := fs.String("script", "", "mock script; without it no mock is served")
	addr := fs.String("addr", "127.0.0.1:0", "mock listen address")
	logPath := fs.String("log", "", "mock request log (JSON lines)")
	ttft := fs.Duration("ttft", 0, "mock time to first token")
	tokenDelay := fs.Duration("token-delay", 0, "mock delay between tokens")
	dir := fs.String("dir", "", "working directory of the command")
	rpc := fs.String("rpc", "", "a line written to the command's stdin; stdin is closed once a stdout line contains --rpc-until")
	rpcUntil := fs.String("rpc-until", `"type":"response"`, "see --rpc")
	timeout := fs.Duration("timeout", 20*time.Minute, "kill the command after this long")
	stdoutFile := fs.String("stdout", "", "also write the command's whole stdout to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 || *out == "" {
		return errors.New("run: --out and a command are required")
	}
	var srv *http.Server
	var m *mock.Server
	if *scriptPath != "" {
		s, err := mock.LoadScript(*scriptPath)
		if err != nil {
			return err
		}
		var log io.Writer = io.Discard
		if *logPath != "" {
			f, err := os.Create(*logPath)
			if err != nil {
				return err
			}
			defer f.Close()
			log = f
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return fmt.Errorf("mock: %w", err)
		}
		m = mock.New(s, mock.Options{TTFT: *ttft, TokenDelay: *tokenDelay, Log: log})
		srv = &http.Server{Handler: m}
		go srv.Serve(ln)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = *dir
	var stdout, stderr tail
	stdout.head = true
	cmd.Stderr = &stderr
	var outw io.Writer = &stdout
	if *stdoutFile != "" {
		f, err := os.Create(*stdoutFile)
		if err != nil {
			return err
		}
		defer f.Close()
		outw = io.MultiWriter(&stdout, f)
	}
	var stdin io.WriteCloser
	var lines *io.PipeReader
	if *rpc != "" {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
		var pw *io.PipeWriter
		lines, pw = io.Pipe()
		cmd.Stdout = io.MultiWriter(outw, pw)
		defer pw.Close()
	} else {
		cmd.Stdout = outw // stdin is /dev/null
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	sampled := make(chan [2]int64, 1)
	stopSampling := make(chan struct{})
	go func() { sampled <- sampleRSS(cmd.Process.Pid, stopSampling) }()
	if stdin != nil {
		go func() {
			io.WriteString(stdin, *rpc+"\n")
			sc := bufio.NewScanner(lines)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), *rpcUntil) {
					break
				}
			}
			stdin.Close()
			io.Copy(io.Discard, lines)
		}()
	}
	werr := cmd.Wait()
	end := time.Now()
	close(stopSampling)
	peaks := <-sampled
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(sctx) // waits for handlers, which log after responding
		scancel()
	}
	r := Result{Cmd: argv, StartNS: start.UnixNano(), EndNS: end.UnixNano(),
		WallMS: ms(end.Sub(start)), Stdout: stdout.String(), Stderr: stderr.String(),
		AnonKB: peaks[0], FileKB: peaks[1]}
	if st := cmd.ProcessState; st != nil {
		r.Exit = st.ExitCode()
		r.UserMS, r.SysMS = ms(st.UserTime()), ms(st.SystemTime())
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSSKB = ru.Maxrss // kilobytes on Linux
		}
	}
	if m != nil {
		r.Requests = m.Requests()
	}
	data, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("%s: %w\nstdout: %s\nstderr: %s", strings.Join(argv, " "), werr, r.Stdout, r.Stderr)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tail keeps the first (head) or last 4 KiB written to it.
type tail struct {
	head bool
	buf  bytes.Buffer
}

const keep = 4096

func (t *tail) Write(p []byte) (int, error) {
	if t.head {
		if room := keep - t.buf.Len(); room > 0 {
			t.buf.Write(p[:min(room, len(p))])
		}
		return len(p), nil
	}
	t.buf.Write(p)
	if t.buf.Len() > 2*keep {
		b := append([]byte(nil), t.buf.Bytes()[t.buf.Len()-keep:]...)
		t.buf.Reset()
		t.buf.Write(b)
	}
	return len(p), nil
}

func (t *tail) String() string {
	b := t.buf.Bytes()
	if !t.head && len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// readLog reads a mock request log.
func readLog(path string) ([]mock.Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []mock.Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var e mock.Entry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, e)
	}
	// A handler logs after its last write, so the next request may be logged first.
	slices.SortFunc(out, func(a, b mock.Entry) int { return a.N - b.N })
	return out, nil
}

func checkCmd(args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	logPath := fs.String("log", "", "mock request log")
	n := fs.Int("requests", -1, "the number of requests expected")
	if err := fs.Parse(args); err != nil {
		return err
	}
	entries, err := readLog(*logPath)
	if err != nil {
		return err
	}
	if *n >= 0 && len(entries) != *n {
		return fmt.Errorf("%s: %d requests, want %d", *logPath, len(entries), *n)
	}
	for _, e := range entries {
		switch {
		case e.Error != "":
			return fmt.Errorf("%s: request %d: %s", *logPath, e.N, e.Error)
		case e.Turn == 0:
			return fmt.Errorf("%s: request %d came after the script's last turn", *logPath, e.N)
		case e.ExpectOK != nil && !*e.ExpectOK:
			return fmt.Errorf("%s: request %d lacks what turn %d's tool should have returned", *logPath, e.N, e.N-1)
		}
	}
	return nil
}

// sampleRSS polls /proc/PID/status every 5 ms until stop is closed and returns the largest
// RssAnon and RssFile seen, in kilobytes.
func sampleRSS(pid int, stop <-chan struct{}) [2]int64 {
	var peak [2]int64
	path := fmt.Sprintf("/proc/%d/status", pid)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				for i, key := range []string{"RssAnon:", "RssFile:"} {
					if rest, ok := strings.CutPrefix(line, key); ok {
						var kb int64
						fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
						peak[i] = max(peak[i], kb)
					}
				}
			}
		}
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}
