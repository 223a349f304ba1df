package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/system"
)

// hiddenProbe is a required verification command that passes only in the OS sandbox: it
// must fail to read probe-secret.txt three levels above the directory it runs in —
// $REIN_HOME from a ticket's worktree, $REIN_HOME/worktrees from its clean checkout, where
// the test puts one — which the sandbox hides and the host shows.
var hiddenProbe = Verification{Argv: []string{"/bin/sh", "-c", "! cat ../../../probe-secret.txt 2>/dev/null"}, Required: true}

// TestSandboxIsPartOfTheRun: the first `rein run next --sandbox` records the run's sandbox
// decision; every later invocation without --sandbox still runs the approved commands in the
// sandbox (built through Env.NewSandbox, as the CLI does), so the ticket's candidate checks
// and verification pass only because they ran sandboxed, and every result says sandboxed.
// An invocation that can build no sandbox stops before anything runs, naming the decision;
// status reports it.
func TestSandboxIsPartOfTheRun(t *testing.T) {
	requireSandbox(t)
	pm := &parallelModels{plan: parallelPlan("{id: t1, title: F1, specItemIds: [r1], dependsOn: []}", "{id: t2, title: F2, specItemIds: [r2], dependsOn: [t1]}"),
		writers: fileWriter(1, false) + fileWriter(2, false)}
	env, id := startRunWith(t, func(p *Profile) { p.Verification = map[string]Verification{"probe": hiddenProbe} })
	env.Agents = testAgents(env.Home, pm.model)
	if rep, err := Status(env, id); err != nil || rep.Sandbox.Sandboxed {
		t.Fatalf("a new run's sandbox = %+v, %v", rep.Sandbox, err)
	}
	sb, err := system.CommandSandboxes(env.Home, true)
	if err != nil {
		t.Fatal(err)
	}

	// rein run next --sandbox (Research): the decision is recorded.
	flagged := env
	flagged.Sandbox = sb
	if _, err := Next(context.Background(), flagged, id); err != nil {
		t.Fatal(err)
	}
	// Every later invocation without --sandbox: the CLI offers a way to build one.
	built := 0
	plain := env
	plain.NewSandbox = func() (func(string) (*sandbox.Sandbox, error), error) { built++; return sb, nil }
	advanceTo(t, plain, id, StageTicketPlanGate, nil)
	approveOpenGate(t, plain, id, GateTicketPlan)

	// No sandbox to be had: nothing runs, and the error names the recorded decision.
	before := len(kinds(t, env, id))
	bare := env
	failing := env
	failing.NewSandbox = func() (func(string) (*sandbox.Sandbox, error), error) {
		return nil, fmt.Errorf("%w: bwrap is not installed", sandbox.ErrUnavailable)
	}
	for name, call := range map[string]func() error{
		"next without a sandbox builder": func() error { _, err := Next(context.Background(), bare, id); return err },
		"resume, bubblewrap missing":     func() error { _, err := Resume(context.Background(), failing, id); return err },
	} {
		err := call()
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(fmt.Sprint(err), "recorded by `rein run next` (--sandbox)") {
			t.Errorf("%s = %v: want a sandbox.ErrUnavailable naming the recorded decision", name, err)
		}
	}
	if n := len(kinds(t, env, id)); n != before {
		t.Fatalf("the refused invocations wrote %d records", n-before)
	}

	// rein run resume, without --sandbox: the tickets' commands run sandboxed (unsandboxed,
	// the probe would read these and fail).
	for _, dir := range []string{env.Home, filepath.Join(env.Home, "worktrees")} {
		write(t, filepath.Join(dir, "probe-secret.txt"), "secret\n")
	}
	if _, err := Resume(context.Background(), plain, id); err != nil {
		t.Fatalf("resume = %v\n%s", err, ticketStatusText(env, id))
	}
	if built == 0 {
		t.Fatal("no invocation after the first built the sandbox")
	}
	rep, err := Status(env, id)
	if err != nil || rep.Stage != StageManualIntegration {
		t.Fatalf("status = %s, %v", rep.Stage, err)
	}
	vs := ticketRecords(t, env, id, KindTicketVerification)
	if len(vs) != 2 {
		t.Fatalf("%d ticket verifications, want 2", len(vs))
	}
	for _, raw := range vs {
		var v TicketVerification
		if err := strictDecode(raw, &v); err != nil {
			t.Fatal(err)
		}
		if !v.Passed || len(v.Results) != 1 || !v.Results[0].Sandboxed {
			t.Errorf("ticket %s verification = %+v: want the probe passed, sandboxed", v.Ticket, v)
		}
		art := readProjectFile(t, rep.Project, v.Artifact.Path)
		if !strings.Contains(art, `"sandboxed": true`) {
			t.Errorf("%s does not say sandboxed:\n%s", v.Artifact.Path, art)
		}
	}

	// Recorded once, by the first invocation; status says so.
	recs := ticketRecords(t, env, id, KindSandbox)
	if len(recs) != 1 {
		t.Fatalf("%d %s records, want 1", len(recs), KindSandbox)
	}
	var d SandboxDecision
	if err := json.Unmarshal(recs[0], &d); err != nil {
		t.Fatal(err)
	}
	if s := rep.Sandbox; !s.Sandboxed || s.By != d.By || s.Command != d.Command || !s.At.Equal(d.At) || !slices.Equal(s.Covers, SandboxCovers) || !d.Sandboxed || d.By != "--sandbox" || d.Command != "next" || d.At.IsZero() {
		t.Errorf("recorded %+v, status %+v", d, rep.Sandbox)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "sandbox: approved commands run in the OS sandbox (run_command, candidate-checks, ticket-verification, full-run-verification)") {
		t.Errorf("status text does not say the commands are sandboxed:\n%s", b.String())
	}
}
