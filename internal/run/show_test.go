package run

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/run/view"
)

// showScenario answers Research with a required unknown and escape sequences in its prose,
// Specification twice (the second after a rejection) and Ticket Planning.
const showScenario = `version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence:
                - id: e1
                  statement: "The requirement asks for a thing. \e[2J\e]52;c;cm0gLXJmIH4=\a safe\rEVIL"
                  references: [requirement]
              remainingUnknowns:
                - {id: u1, description: Where the thing lives., required: true}
              requiredEvidenceUnavailable: []
              clarificationQuestions:
                - {id: q1, question: "Where should it live?", unknownIds: [u1]}
      - text: Submitted.
  - match: 'stage specification, attempt 1'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: A thing
              sections:
                - id: s1
                  title: Scope
                  body: Do the thing.
                  items:
                    - {id: r1, kind: requirement, statement: The thing is done.}
                    - {id: a1, kind: acceptance, statement: It is done.}
              inputReferences: [requirement, research, clarification]
      - text: Submitted.
  - match: 'stage specification, attempt 2'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              title: A thing in internal/thing
              sections:
                - id: s1
                  title: Scope
                  body: Do the thing in internal/thing.
                  items:
                    - {id: r1, kind: requirement, statement: The thing is done.}
                    - {id: a1, kind: acceptance, statement: go test ./internal/thing passes.}
              inputReferences: [requirement, research, clarification, spec-rejection]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t1, title: Do the thing, specItemIds: [r1, a1], dependsOn: []}
      - text: Submitted.
`

// showRun makes a run on the script model up to the Ticket Plan Gate: research, answers, a
// spec the Spec Gate rejects, a second spec it approves, a ticket plan.
func showRun(t *testing.T) (Env, string) {
	t.Helper()
	env, id := startRun(t)
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		return script.Parse([]byte(showScenario), "scenario.yaml")
	})
	next := func() {
		t.Helper()
		if _, err := Next(context.Background(), env, id); err != nil {
			t.Fatal(err)
		}
	}
	next() // research
	if _, err := Clarify(env, id, map[string]string{"u1": "under internal/thing"}); err != nil {
		t.Fatal(err)
	}
	next() // specification, attempt 1
	if _, err := RejectGate(env, id, GateSpec, "name the package", "ana"); err != nil {
		t.Fatal(err)
	}
	next() // specification, attempt 2
	v, err := GateArtifact(env, id, GateSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApproveGate(env, id, GateSpec, artifact.Digest(v.Digest), "ana"); err != nil {
		t.Fatal(err)
	}
	next() // ticket planning
	if rep, _ := Status(env, id); rep.Stage != StageTicketPlanGate {
		t.Fatalf("run at %s, want %s", rep.Stage, StageTicketPlanGate)
	}
	return env, id
}

func TestShowRendersEveryArtifact(t *testing.T) {
	env, id := showRun(t)
	before := snapshotRun(t, env, id)
	list, err := Artifacts(env, id)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, a := range list {
		files = append(files, path.Base(a.Path)+"@"+a.MadeBy())
	}
	want := []string{"requirement.md@stage start, attempt 1", "requirement-snapshot.md@stage start, attempt 1",
		"execution-lock.md@stage start, attempt 1", "preflight.md@stage preflight, attempt 1",
		"research.md@stage research, attempt 1", "clarification.md@stage clarification, attempt 1",
		"spec.md@stage specification, attempt 1", "spec-rejection-1.md@stage spec-gate, attempt 1",
		"spec-2.md@stage specification, attempt 2", "ticket-plan.md@stage ticket-planning, attempt 1"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("artifacts:\n%s\nwant\n%s", strings.Join(files, "\n"), strings.Join(want, "\n"))
	}
	digest := map[string]string{}
	for _, a := range list {
		digest[path.Base(a.Path)] = string(a.Digest)
	}
	sections := map[string][]string{
		"requirement-snapshot.md": {"## Content digest\n", "## Branch\nrein/"},
		"execution-lock.md":       {"## Harness\nversion: v1\n", "## Models\nreview:\n  provider: anthropic\n"},
		"preflight.md":            {"## Checks\n- "},
		"research.md": {"## Established evidence\n- id: e1\n", "  references:\n    - requirement (" + digest["requirement.md"] + ")\n",
			"## Remaining unknowns\n- id: u1\n", "  required: yes\n", "## Required evidence unavailable\n(none)\n"},
		"clarification.md":    {"u1", "under internal/thing"},
		"spec.md":             {"## Title\nA thing\n", "## Sections\n- id: s1\n", "  items:\n    - id: r1\n", "## Input references\n- requirement (sha256:"},
		"spec-rejection-1.md": {"## Reason\nname the package\n", "inputs:\n  - spec " + digest["spec.md"] + "\n"},
		"spec-2.md":           {"- spec-rejection (" + digest["spec-rejection-1.md"] + ")\n", "  - research " + digest["research.md"] + "\n"},
		"ticket-plan.md":      {"## Tickets\n- id: t1\n", "  spec item ids:\n    - r1\n    - a1\n", "  depends on: (none)\n", "inputs:\n  - spec " + digest["spec-2.md"] + "\n"},
	}
	for _, a := range list {
		name := path.Base(a.Path)
		args := []string{name, a.Path}
		if base := strings.TrimSuffix(name, ".md"); base != a.ID {
			args = append(args, base) // a bare id names its latest version
		}
		for _, arg := range args {
			v, err := ViewArtifact(env, id, arg)
			if err != nil {
				t.Fatalf("view %s: %v", arg, err)
			}
			if v.Path != a.Path {
				t.Fatalf("view %s = %s, want %s", arg, v.Path, a.Path)
			}
		}
		v, _ := ViewArtifact(env, id, name)
		text, err := view.Render(v)
		if err != nil {
			t.Fatalf("render %s: %v", name, err)
		}
		for _, w := range append(sections[name], "artifact: "+a.ID+"\n", "digest: "+string(a.Digest)+"\n",
			"file digest: "+string(a.FileDigest)+"\n", "made by: "+a.MadeBy()+"\n") {
			if !strings.Contains(text, w) {
				t.Errorf("%s rendered without %q:\n%s", name, w, text)
			}
		}
		if strings.ContainsAny(text, "{}\x1b\x07\r") || strings.Contains(text, `":`) {
			t.Errorf("%s rendered with raw JSON or control characters:\n%s", name, text)
		}
		if strings.Contains(text, "WARNING") {
			t.Errorf("%s rendered with a warning although it is as recorded:\n%s", name, text)
		}
	}
	res, _ := ViewArtifact(env, id, ArtResearch)
	text, _ := view.Render(res)
	for _, w := range []string{`\x1b[2J`, `\x1b]52;c;cm0gLXJmIH4=\a`, `safe\rEVIL`} {
		if !strings.Contains(text, w) {
			t.Errorf("research rendered without the visible escape %q:\n%s", w, text)
		}
	}
	if raw := view.Raw(res); strings.ContainsAny(raw, "\x1b\x07\r") || !strings.Contains(raw, `"establishedEvidence"`) {
		t.Errorf("raw research is not the file made visible:\n%s", raw)
	}
	if v, _ := ViewArtifact(env, id, ArtSpec); v.Path != list[8].Path {
		t.Errorf("spec by id = %s, want the latest version %s", v.Path, list[8].Path)
	}
	if _, err := ViewArtifact(env, id, "nope"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "spec (spec.md, spec-2.md)") {
		t.Errorf("unknown artifact = %v, want a usage error naming the artifacts", err)
	}
	if _, err := GateArtifact(env, id, GateSpec); !errors.Is(err, ErrNotRunnable) {
		t.Errorf("gate artifact of a closed gate = %v, want ErrNotRunnable", err)
	}
	if v, err := GateArtifact(env, id, GateTicketPlan); err != nil || v.Path != list[9].Path {
		t.Errorf("ticket plan gate artifact = %v, %v", v.Path, err)
	}
	sameFiles(t, "show", before, snapshotRun(t, env, id))
}

func TestDiffBetweenAttempts(t *testing.T) {
	env, id := showRun(t)
	before := snapshotRun(t, env, id)
	for _, c := range []struct {
		name    string
		attempt int
		base    string
	}{{ArtSpec, 0, "the version the spec gate rejected"}, {ArtSpec, 2, "the version the spec gate rejected"}, {"spec-2.md", 0, "the version the spec gate rejected"}} {
		p, err := DiffArtifacts(env, id, c.name, c.attempt)
		if err != nil {
			t.Fatalf("diff %s --attempt %d: %v", c.name, c.attempt, err)
		}
		if path.Base(p.Old.Path) != "spec.md" || path.Base(p.New.Path) != "spec-2.md" || p.Base != c.base {
			t.Fatalf("diff %s --attempt %d compares %s with %s (%s)", c.name, c.attempt, p.New.Path, p.Old.Path, p.Base)
		}
		old, _ := view.Render(p.Old)
		new, _ := view.Render(p.New)
		d := view.Diff(p.Old.Path, p.New.Path, old, new)
		for _, w := range []string{"--- " + p.Old.Path + "\n", "+++ " + p.New.Path + "\n", "-A thing\n", "+A thing in internal/thing\n",
			"-  body: Do the thing.\n", "+  body: Do the thing in internal/thing.\n", "+      statement: go test ./internal/thing passes.\n", "+- spec-rejection (sha256:",
			"-path: " + p.Old.Path + "\n", "+digest: " + p.New.Digest + "\n"} {
			if !strings.Contains(d, w) {
				t.Errorf("diff lacks %q:\n%s", w, d)
			}
		}
		if strings.Contains(d, "-## Sections") || strings.Contains(d, " - id: r1\n") && strings.Contains(d, "-    - id: r1\n") {
			t.Errorf("diff marks unchanged lines as changed:\n%s", d)
		}
	}
	p, err := DiffArtifacts(env, id, ArtSpec, 1)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "only attempt 1 (spec.md)") {
		t.Errorf("diff of the first attempt = %+v, %v; want a usage error: nothing before it", p.Base, err)
	}
	_, err = DiffArtifacts(env, id, ArtSpec, 3)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "has no attempt 3; its versions: attempt 1 (spec.md), attempt 2 (spec-2.md)") {
		t.Errorf("diff of an unknown attempt = %v, want a usage error naming the attempts", err)
	}
	_, err = DiffArtifacts(env, id, "spec-2.md", 2)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "pass its id (spec)") {
		t.Errorf("diff of a file with --attempt = %v, want a usage error", err)
	}
	_, err = DiffArtifacts(env, id, "ticket-plan", 0)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "nothing to compare") {
		t.Errorf("diff of a single version = %v, want a usage error", err)
	}
	_, err = DiffArtifacts(env, id, "specs", 0)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `no artifact "specs"`) {
		t.Errorf("diff of an unknown artifact = %v, want a usage error", err)
	}
	sameFiles(t, "diff", before, snapshotRun(t, env, id))
}
