package mcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/tool"
)

// The reference servers from npm, at the versions the tests were written against. CI
// installs them and names the directory in REIN_MCP_NPM_DIR; elsewhere the first test that
// needs them installs them under the user's cache directory.
const npmPackages = "@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

// npmServers returns the directory holding node_modules/.bin/mcp-server-{everything,filesystem},
// skipping the test only when Node is not installed.
func npmServers(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI must run the tests against the MCP servers from npm: .ci/run installs Node", tool)
			}
			t.Skipf("%s is not installed: the tests against the MCP servers from npm (%s) need Node; .ci/run installs it", tool, npmPackages)
		}
	}
	npmOnce.Do(func() {
		npmDir = os.Getenv("REIN_MCP_NPM_DIR")
		if npmDir == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				npmErr = err
				return
			}
			npmDir = filepath.Join(cache, "rein-test-mcp-npm")
		}
		if _, err := os.Stat(filepath.Join(npmDir, "node_modules", ".bin", "mcp-server-filesystem")); err == nil {
			return
		}
		var out strings.Builder
		args := append([]string{"npm", "install", "--no-audit", "--no-fund", "--prefix", npmDir}, strings.Fields(npmPackages)...)
		res := proc.Run(context.Background(), proc.Spec{Path: "npm", Args: args, Stdout: &out, Stderr: &out, Timeout: 5 * time.Minute, Contain: true})
		if res.Outcome != proc.Exited || res.Code != 0 {
			npmErr = fmt.Errorf("npm install %s: %s\n%s", npmPackages, res, out.String())
		}
	})
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	return npmDir
}

func bin(dir, name string) string { return filepath.Join(dir, "node_modules", ".bin", name) }

func openServers(t *testing.T, servers ...Server) (*Manager, map[string]*Tool) {
	t.Helper()
	m := Open(context.Background(), Options{Servers: servers, Dir: t.TempDir(), Environ: os.Environ(), StartTimeout: 60 * time.Second})
	t.Cleanup(func() { _ = m.Close() })
	for _, s := range m.Servers() {
		if s.State != StateConnected {
			t.Fatalf("server %s: %s: %v", s.Name, s.State, s.Err)
		}
	}
	tools, problems := m.Tools()
	if len(problems) > 0 {
		t.Errorf("tools refused: %v", problems)
	}
	by := map[string]*Tool{}
	for _, tl := range tools {
		by[tl.Spec().Name] = tl
	}
	return m, by
}

func TestFilesystemServerOverStdio(t *testing.T) {
	dir := npmServers(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the secret word is rhubarb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(root)
	_, by := openServers(t, Server{Name: "fs", Command: bin(dir, "mcp-server-filesystem"), Args: []string{real}})
	read := by["mcp__fs__read_text_file"]
	if read == nil {
		t.Fatalf("no mcp__fs__read_text_file among %v", keys(by))
	}
	if s := read.Spec(); s.Replay != tool.ReplaySafe {
		t.Errorf("read_text_file is annotated read-only; replay %q", s.Replay)
	}
	if s := by["mcp__fs__write_file"].Spec(); s.Replay != tool.ReplayNever {
		t.Errorf("write_file: replay %q, want never", s.Replay)
	}
	res, err := run(t, read, fmt.Sprintf(`{"path":%q}`, filepath.Join(real, "notes.txt")))
	if err != nil || res.IsError || !strings.Contains(text(res), "rhubarb") {
		t.Fatalf("reading a file inside the root: %q isError=%v %v", text(res), res.IsError, err)
	}
	// Outside its roots the server answers with a tool error inside a result.
	res, err = run(t, read, `{"path":"/etc/hostname"}`)
	if err != nil || !res.IsError {
		t.Fatalf("reading outside the root: %q isError=%v %v; want an error result", text(res), res.IsError, err)
	}
}

func TestEverythingServerOverStdio(t *testing.T) {
	dir := npmServers(t)
	m, by := openServers(t, Server{Name: "everything", Command: bin(dir, "mcp-server-everything"), Args: []string{"stdio"}})
	if len(by) < 5 {
		t.Fatalf("only %d tools: %v", len(by), keys(by))
	}
	if m.Servers()[0].Instructions == "" {
		t.Error("server-everything sends instructions; none were kept")
	}
	echo := by["mcp__everything__echo"]
	if echo == nil {
		t.Fatalf("no echo tool among %v", keys(by))
	}
	res, err := run(t, echo, `{"message":"ping from rein"}`)
	if err != nil || !strings.Contains(text(res), "ping from rein") {
		t.Fatalf("echo: %q %v", text(res), err)
	}
}

func TestEverythingServerOverStreamableHTTP(t *testing.T) {
	dir := npmServers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	preload, _ := filepath.Abs("testdata/loopback.cjs")
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	var logs strings.Builder
	var mu sync.Mutex
	p, err := proc.Start(context.Background(), proc.Spec{Path: "node", Args: []string{"node", "--require", preload, entry, "streamableHttp"},
		Env: append(os.Environ(), fmt.Sprintf("PORT=%d", port)), Stderr: lockedWriter{&mu, &logs}, Contain: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("server-everything did not listen on %s: %s", addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, by := openServers(t, Server{Name: "remote", Type: TypeHTTP, URL: "http://" + addr + "/mcp", Headers: map[string]string{"X-Rein-Test": "1"}})
	echo := by["mcp__remote__echo"]
	if echo == nil {
		t.Fatalf("no echo tool among %v", keys(by))
	}
	res, err := run(t, echo, `{"message":"over http"}`)
	if err != nil || !strings.Contains(text(res), "over http") {
		t.Fatalf("echo over HTTP: %q %v", text(res), err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
