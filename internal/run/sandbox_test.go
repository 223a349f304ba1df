package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/sandbox/sandboxtest"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tool"
)

// escapeProbes are verification commands that each do what the OS sandbox forbids: write
// outside the directory they run in, read $REIN_HOME (three levels up from a run's
// checkout, $REIN_HOME/worktrees/<run>/<dir>), connect to a socket on the host.
func escapeProbes(t *testing.T, outside string) map[string]Verification {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	return map[string]Verification{
		"write": {Argv: []string{"touch", filepath.Join(outside, "escaped")}, Required: true},
		"home":  {Argv: []string{"cat", "../../../probe-secret.txt"}, Required: true},
		"net":   {Argv: []string{"/bin/bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)}, Required: true},
	}
}

// requireSandbox skips (locally) a test that needs a working bubblewrap.
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.New(t, sandbox.Config{Workspace: t.TempDir()})
}

// verificationReport reads the JSON of a verification artifact of the run.
func verificationReport(t *testing.T, d *deliveryRun, name string) VerificationReport {
	t.Helper()
	data := readProjectFile(t, d.project, RunsDir+"/"+d.id+"/"+name)
	_, body, _ := strings.Cut(data, "```json\n")
	body, _, _ = strings.Cut(body, "\n```")
	var rep VerificationReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, data)
	}
	return rep
}

// TestFullVerificationSandboxed: the same verification commands that write outside their
// checkout, read $REIN_HOME and open a socket pass without the sandbox and fail in it, and
// the run records them failed, sandboxed, as run_full_verification_failed.
func TestFullVerificationSandboxed(t *testing.T) {
	requireSandbox(t)
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			outside := t.TempDir()
			d := newDeliveryRunVerified(t, goodFiles(), escapeProbes(t, outside))
			write(t, filepath.Join(d.env.Home, "probe-secret.txt"), "secret\n")
			if sandboxed {
				sb, err := system.CommandSandboxes(d.env.Home, true)
				if err != nil || sb == nil {
					t.Fatalf("CommandSandboxes = %v", err)
				}
				d.env.Sandbox = sb
			}
			for _, s := range []string{StageManualIntegration, StageReconciliation, StageFinalChecklist} {
				d.mustNext(t, s)
			}
			_, err := d.next(t)
			rep := verificationReport(t, d, "full-verification.md")
			_, statErr := os.Stat(filepath.Join(outside, "escaped"))
			if !sandboxed {
				if err != nil || !rep.Passed || rep.Sandboxed || statErr != nil {
					t.Fatalf("unsandboxed: Next = %v, report %+v, escaped file: %v", err, rep, statErr)
				}
				return
			}
			codes := blockerCodes(err)
			if len(codes) != 1 || !strings.HasPrefix(codes[0], BlockFullVerificationFailed+":") {
				t.Fatalf("Next = %v (%q)", err, codes)
			}
			for _, id := range []string{"write", "home", "net"} {
				if !strings.Contains(codes[0], id+" (exit ") {
					t.Errorf("the blocker does not name %s: %s", id, codes[0])
				}
			}
			if rep.Passed || !rep.Sandboxed || len(rep.Commands) != 3 {
				t.Fatalf("report = %+v", rep)
			}
			for _, c := range rep.Commands {
				if c.Passed || c.ExitCode == 0 || !c.Sandboxed || c.Error != "" {
					t.Errorf("%s in the sandbox: %+v", c.ID, c)
				}
			}
			if statErr == nil {
				t.Error("a sandboxed verification command wrote outside its checkout")
			}
			if rep := d.status(t); rep.Stage != StageFullVerification {
				t.Errorf("stage after the failed verification = %s", rep.Stage)
			}
		})
	}
}

// TestRunCommandSandboxed: the writer's run_command runs an approved command in the OS
// sandbox: it may write its worktree, and cannot write outside, read $REIN_HOME or reach the
// network.
func TestRunCommandSandboxed(t *testing.T) {
	requireSandbox(t)
	home, outside := t.TempDir(), t.TempDir()
	ws := filepath.Join(home, "worktrees", "r1", "t1")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "probe-secret.txt"), "secret\n")
	cmds := escapeProbes(t, outside)
	cmds["make"] = Verification{Argv: []string{"touch", "made"}}
	sb, err := system.CommandSandboxes(home, true)
	if err != nil {
		t.Fatal(err)
	}
	rc := &runCommandTool{run: &Run{Lock: &Lock{Verification: cmds}}, env: Env{Sandbox: sb}, dir: ws}
	for id := range cmds {
		res, err := rc.Run(context.Background(), tool.Call{ID: id, Args: json.RawMessage(`{"id":"` + id + `"}`)})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if res.IsError != (id != "make") {
			t.Errorf("%s: IsError = %v: %v", id, res.IsError, res.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Errorf("the worktree is not writable in the sandbox: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Error("run_command wrote outside the worktree")
	}
}

// TestSandboxUnavailableFailsClosed: when the sandbox was asked for and cannot be built, no
// approved command runs — neither the writer's run_command nor a verification — and the
// error says why; a later invocation without a sandbox does not run them unsandboxed either.
func TestSandboxUnavailableFailsClosed(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "worktrees", "r1", "t1")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	gone := func(string) (*sandbox.Sandbox, error) {
		return nil, fmt.Errorf("%w: bwrap was not found", sandbox.ErrUnavailable)
	}
	cmds := map[string]Verification{"make": {Argv: []string{"touch", "made"}, Required: true}}
	r := &Run{Lock: &Lock{Verification: cmds}}
	rc := &runCommandTool{run: r, env: Env{Sandbox: gone}, dir: ws}
	if _, err := rc.Run(context.Background(), tool.Call{ID: "c1", Args: json.RawMessage(`{"id":"make"}`)}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("run_command = %v", err)
	}
	if _, _, err := r.runVerification(context.Background(), Env{Sandbox: gone}, ws, nil); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("the candidate's verification = %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
		t.Error("a command ran although its sandbox could not be built")
	}

	d := newDeliveryRun(t, goodFiles())
	for _, s := range []string{StageManualIntegration, StageReconciliation, StageFinalChecklist} {
		d.mustNext(t, s)
	}
	d.env.Sandbox = gone
	if _, err := d.next(t); !errors.Is(err, sandbox.ErrUnavailable) || blockerCodes(err) != nil {
		t.Fatalf("Full Run Verification without its sandbox = %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.project, RunsDir, d.id, "full-verification.md")); err == nil {
		t.Error("a verification was recorded although its commands could not run")
	}
	// The run recorded the sandbox: without one, the next invocation stops before anything
	// runs, naming the decision, instead of running the commands unsandboxed.
	d.env.Sandbox = nil
	if _, err := d.next(t); !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "recorded by `rein run next` (--sandbox)") {
		t.Fatalf("Full Run Verification without a sandbox on a sandboxed run = %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.project, RunsDir, d.id, "full-verification.md")); err == nil {
		t.Error("a verification ran unsandboxed on a run that recorded the sandbox")
	}
}
