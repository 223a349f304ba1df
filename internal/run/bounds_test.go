package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

// boundsScenario makes each model stage read inside and outside its boundary before it
// submits the contract workflowScenario submits; home is $REIN_HOME.
func boundsScenario(home string) string {
	return fmt.Sprintf(`version: 1
dialogs:
  - match: 'stage research,'
    turns:
      - calls:
          - {name: read, id: r-rein, args: {path: .rein/notes.txt}}
          - {name: read, id: r-dirlink, args: {path: docs/rein/notes.txt}}
          - {name: read, id: r-filelink, args: {path: alias.txt}}
          - {name: read, id: r-hardlink, args: {path: hard.txt}}
          - {name: read, id: r-home, args: {path: %q}}
          - {name: read, id: r-homelink, args: {path: homelink/canary.txt}}
          - {name: read, id: r-src, args: {path: src/main.go}}
          - {name: grep, id: r-grep, args: {pattern: MARK}}
          - {name: find, id: r-find, args: {pattern: '*'}}
          - {name: ls, id: r-ls, args: {}}
      - calls:
          - name: rein_stage_result
            args:
              stage: research
              establishedEvidence: [{id: e1, statement: The requirement asks for a thing., references: [requirement]}]
              remainingUnknowns: []
              requiredEvidenceUnavailable: []
              clarificationQuestions: []
      - text: Submitted.
  - match: 'stage specification,'
    turns:
      - calls:
          - {name: read, id: s-approval, args: {path: .rein/profile.approval.json}}
          - {name: read, id: s-src, args: {path: src/main.go}}
          - {name: read, id: s-link, args: {path: alias.txt}}
          - {name: read, id: s-guidance, args: {path: AGENTS.md}}
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
                    - {id: a1, kind: acceptance, statement: The thing is observably done.}
              inputReferences: [requirement, research]
      - text: Submitted.
  - match: 'stage ticket-planning,'
    turns:
      - calls:
          - {name: read, id: p-profile, args: {path: .rein/profile.yaml}}
          - {name: read, id: p-src, args: {path: src/main.go}}
      - calls:
          - name: rein_stage_result
            args:
              tickets:
                - {id: t1, title: Do the thing, specItemIds: [r1, a1], dependsOn: []}
      - text: Submitted.
`, filepath.Join(home, "canary.txt"))
}

// TestStageReadBoundaries runs Research, Specification and Ticket Planning on the script model,
// each reading inside and outside its boundary through the real tools, over real files,
// symbolic links and a hard link: Research reads the repository but nothing of .rein/ or
// $REIN_HOME, however reached (a listing may show a hard link's name, never its content);
// Specification and Ticket Planning get only the read tool, and it
// reads only their pack's files. Every refused read is a tool result the model sees, naming the
// boundary, and each stage still completes.
func TestStageReadBoundaries(t *testing.T) {
	env0, id := startRun(t)
	rep, err := Status(env0, id)
	if err != nil {
		t.Fatal(err)
	}
	root, home := rep.Project, env0.Home
	write(t, filepath.Join(root, "src", "main.go"), "package main // SRC-MARK\n")
	write(t, filepath.Join(root, ".rein", "notes.txt"), "REIN-MARK-7d2\n")
	write(t, filepath.Join(home, "canary.txt"), "HOME-MARK-91a\n")
	for _, l := range [][2]string{{"../.rein", "docs/rein"}, {".rein/notes.txt", "alias.txt"}, {home, "homelink"}} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, l[1])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(root, ".rein", "notes.txt"), filepath.Join(root, "hard.txt")); err != nil {
		t.Fatal(err)
	}

	env := workflowEnv(home)
	current := ""
	reqs := map[string][]*llm.Request{}
	env.Agents = testAgents(home, func(string, ModelPolicy) (llm.Model, error) {
		m, err := script.Parse([]byte(boundsScenario(home)), "bounds.yaml")
		if err != nil {
			return nil, err
		}
		stage := current
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			reqs[stage] = append(reqs[stage], req)
			return m.Stream(ctx, req, emit)
		}), nil
	})
	advanceTo(t, env, id, StageTicketPlanGate, func(s string) { current = s })

	results := map[string]llm.Message{}
	for _, s := range []string{StageResearch, StageSpecification, StageTicketPlanning} {
		if len(reqs[s]) < 2 {
			t.Fatalf("%s sent %d request(s), want the reads answered", s, len(reqs[s]))
		}
		for _, m := range reqs[s][1].Messages {
			if m.Role == llm.RoleTool {
				results[m.ToolCallID] = m
			}
		}
	}
	refused := func(call string, want ...string) {
		t.Helper()
		m, ok := results[call]
		text := m.Text()
		if !ok || !m.IsError {
			t.Errorf("%s: not refused (found %v): %s", call, ok, text)
			return
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: refusal lacks %q: %s", call, w, text)
			}
		}
	}
	allowed := func(call, want string, never ...string) {
		t.Helper()
		m, ok := results[call]
		text := m.Text()
		if !ok || m.IsError || !strings.Contains(text, want) {
			t.Errorf("%s: want a result with %q, got (found %v, error %v) %s", call, want, ok, m.IsError, text)
		}
		for _, n := range never {
			if strings.Contains(text, n) {
				t.Errorf("%s: result shows %q: %s", call, n, text)
			}
		}
	}
	research := "the research stage's inputs (the repository without .rein/)"
	refused("r-rein", "read_out_of_scope", ".rein/notes.txt", research)
	refused("r-dirlink", "read_out_of_scope", ".rein/notes.txt", research)
	refused("r-filelink", "read_out_of_scope", ".rein/notes.txt", research)
	refused("r-hardlink", "hard links", research)
	refused("r-home", "rein's home directory")
	refused("r-homelink", "outside the workspace")
	allowed("r-src", "SRC-MARK")
	allowed("r-grep", "SRC-MARK", "REIN-MARK", "HOME-MARK")
	allowed("r-find", "src/main.go", ".rein", "notes.txt", "alias.txt", "docs/rein")
	allowed("r-ls", "src/", ".rein", "alias.txt")

	spec := "the specification stage's pack"
	refused("s-approval", "read_out_of_scope", ".rein/profile.approval.json", spec, "AGENTS.md", ".rein/runs/"+id+"/research.md")
	refused("s-src", "read_out_of_scope", "src/main.go", spec)
	refused("s-link", "read_out_of_scope", ".rein/notes.txt", spec)
	allowed("s-guidance", "# rules")
	refused("p-profile", "read_out_of_scope", ".rein/profile.yaml", "the ticket-planning stage's pack")
	refused("p-src", "read_out_of_scope", "src/main.go", "the ticket-planning stage's pack")

	for s, want := range map[string][]string{
		StageResearch:       {"read", "grep", "find", "ls", "rein_stage_result"},
		StageSpecification:  {"read", "rein_stage_result"},
		StageTicketPlanning: {"read", "rein_stage_result"},
	} {
		var got []string
		for _, ts := range reqs[s][0].Tools {
			got = append(got, ts.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s offers %v, want %v", s, got, want)
		}
	}
}
