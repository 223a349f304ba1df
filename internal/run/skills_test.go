package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
	"github.com/reinhq/rein/internal/llm/script"
)

const skillText = "# Careful research\n\nCite the pack for every fact.\n"

// carefulFiles is a skill tree with several files: a SKILL.md holding a fenced block, a nested
// reference, a file without a final line break and a binary file.
var carefulFiles = map[string]string{
	"skills/careful/SKILL.md":                skillText + "\n```go\nfmt.Println(\"cite\")\n```\n",
	"skills/careful/refs/checklist.md":       "- every claim has a reference\n- CANARY-careful-nested-0\n",
	"skills/careful/refs/deep/example.md":    "An example, nested two levels: CANARY-careful-nested-2",
	"skills/careful/logo.bin":                "\x89PNG\x00\x01\x02CANARY-binary",
	"skills/speconly/SKILL.md":               "# Spec only\n\nCANARY-speconly: write acceptance items.\n",
	"skills/unmapped/SKILL.md":               "# Unmapped\n\nCANARY-unmapped: never sent.\n",
	"skills/unmapped/notes/more.md":          "CANARY-unmapped-notes\n",
	"skills/speconly/templates/template.txt": "Title:\nItems:\n",
}

// startSkillRun starts a run in a fresh git repository holding files (path → content) whose
// profile is the draft edited by edit.
func startSkillRun(t *testing.T, files map[string]string, edit func(*Profile)) (Env, string, string) {
	t.Helper()
	env, root := Env{Home: t.TempDir(), Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, Workflow: DeliveryWorkflow()}, t.TempDir()
	env.Agents = testAgents(env.Home, nil)
	write(t, filepath.Join(root, "go.mod"), "module example.com/x\n")
	write(t, filepath.Join(root, "AGENTS.md"), "# rules\n")
	write(t, filepath.Join(root, "req.md"), "# Do a thing\n")
	for p, s := range files {
		write(t, filepath.Join(root, filepath.FromSlash(p)), s)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i"}} {
		if _, err := git(root, args...); err != nil {
			t.Skip("git: ", err)
		}
	}
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	data, _ := p.Marshal()
	write(t, filepath.Join(root, ProfilePath), string(data))
	if _, err := Approve(root, "ana", time.Now()); err != nil {
		t.Fatal(err)
	}
	id, err := Start(env, StartOptions{Project: root, Requirement: filepath.Join(root, "req.md")})
	if err != nil {
		t.Fatal(err)
	}
	return env, id, root
}

// mapSkills pins careful to Research and Specification, speconly to Specification only and
// unmapped to no stage.
func mapSkills(p *Profile) {
	p.Skills = []Skill{
		{Name: "careful", Revision: "r1", Path: "skills/careful", Stages: []string{StageResearch, StageSpecification}},
		{Name: "speconly", Revision: "2", Path: "skills/speconly", Stages: []string{StageSpecification}},
		{Name: "unmapped", Revision: "1", Path: "skills/unmapped"},
	}
}

const (
	researchArgs = `{"stage":"research","establishedEvidence":[{"id":"e1","statement":"The requirement asks for a thing.","references":["requirement"]}],"remainingUnknowns":[],"requiredEvidenceUnavailable":[],"clarificationQuestions":[]}`
	specArgs     = `{"title":"A thing","sections":[{"id":"s1","title":"Scope","body":"Do the thing.","items":[{"id":"r1","kind":"requirement","statement":"The thing is done."},{"id":"a1","kind":"acceptance","statement":"The thing is observably done."}]}],"inputReferences":["requirement","research"]}`
)

// chatBody is the part of a Chat Completions request body the skill tests read.
type chatBody struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastUserText is the text of the last user message of a Chat Completions request body, and
// whether the body holds a tool result (the turn after a tool call).
func lastUserText(t *testing.T, body []byte) (string, bool) {
	t.Helper()
	var req chatBody
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	last, tool := "", false
	for _, m := range req.Messages {
		tool = tool || m.Role == "tool"
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				s += p.Text
			}
		}
		last = s
	}
	return last, tool
}

// stageServer is a Chat Completions server that answers the Research and Specification
// requests with a valid contract through rein_stage_result (then "Submitted.") and keeps the
// body of each stage's first request.
func stageServer(t *testing.T) (*httptest.Server, func() map[string][]byte) {
	var mu sync.Mutex
	first := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		text, afterTool := lastUserText(t, body)
		w.Header().Set("Content-Type", "text/event-stream")
		if afterTool {
			io.WriteString(w, chattest.SSE(chattest.Role, chattest.Content("Submitted."), chattest.Finish("stop"), chattest.Usage(120, 3, 0)))
			return
		}
		var stage, args string
		switch {
		case strings.Contains(text, ": stage research,"):
			stage, args = StageResearch, researchArgs
		case strings.Contains(text, ": stage specification,"):
			stage, args = StageSpecification, specArgs
		default:
			http.Error(w, "not a stage request this server answers", http.StatusBadRequest)
			return
		}
		mu.Lock()
		if first[stage] == nil {
			first[stage] = body
		}
		mu.Unlock()
		io.WriteString(w, chattest.SSE(chattest.Role, chattest.CallStart(0, "call_1", "rein_stage_result"),
			chattest.CallArgs(0, args), chattest.Finish("tool_calls"), chattest.Usage(100, 20, 0)))
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string][]byte {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(first)
	}
}

// wantSkillTree checks that text carries the whole tree of the skill at root/dir as a pinned,
// unmodified, locked tree: each of files (its paths in walk order; a .bin file is binary) with
// its size and digest, a text file's bytes verbatim in a fence longer than any backtick run in
// it, a binary file named only.
func wantSkillTree(t *testing.T, text, root, dir, header string, locked artifact.Digest, files ...string) {
	t.Helper()
	if d, err := SkillTreeDigest(filepath.Join(root, filepath.FromSlash(dir))); err != nil || d != locked {
		t.Fatalf("%s: tree digest %s (%v), locked %s", dir, d, err, locked)
	}
	at := strings.Index(text, fmt.Sprintf("%s\n\npath: %s\ntree digest: %s (locked)\nfiles: %d, ", header, dir, locked, len(files)))
	if at < 0 {
		t.Fatalf("request lacks %q with its path, locked tree digest and file count:\n%s", header, text)
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		entry := fmt.Sprintf("\n#### %s\n\n%d bytes, %s", name, len(data), artifact.Sum(data))
		if strings.HasSuffix(name, ".bin") {
			entry += "; binary: not sent\n"
			if strings.Contains(text, "CANARY-binary") {
				t.Errorf("%s/%s: a binary file's bytes were sent", dir, name)
			}
		} else {
			fence := strings.Repeat("`", max(3, longestRun(data, '`')+1))
			body := string(data)
			if !strings.HasSuffix(body, "\n") {
				body += "\n"
			}
			entry += "\n\n" + fence + "\n" + body + fence + "\n"
		}
		i := strings.Index(text[at:], entry)
		if i < 0 {
			t.Fatalf("request lacks %s/%s, or not after the files before it, as\n%s", dir, name, entry)
		}
		at += i + len(entry)
	}
}

// TestSkillTreesInRequestsOpenAICompat runs Research and Specification on provider
// openai-compat against a Chat Completions server and reads the skills in the request bodies
// the server received: careful (mapped to both) with every file of its tree, a nested one and
// a binary one included; speconly (mapped to Specification) only in Specification's request;
// unmapped (no stages) in none. Each carries the statement that the text is the pinned,
// unmodified tree, checked against the locked digest and wrapped by the contract.
func TestSkillTreesInRequestsOpenAICompat(t *testing.T) {
	srv, bodies := stageServer(t)
	env, id, root := startSkillRun(t, carefulFiles, func(p *Profile) {
		mapSkills(p)
		m := p.Models[RoleWorkflow]
		m.Provider, m.Model, m.BaseURL, m.Script = llm.ProviderOpenAICompat, "local-model", srv.URL+"/v1", ""
		p.Models[RoleWorkflow] = m
	})
	env.Agents = testAgents(env.Home, func(_ string, p ModelPolicy) (llm.Model, error) {
		return openaicompat.New(openaicompat.Config{Model: p.Model, BaseURL: p.BaseURL, APIKey: "k", HTTPClient: srv.Client()})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, want := range []string{StageResearch, StageSpecification} {
		if stage, err := Next(ctx, env, id); err != nil || stage != want {
			t.Fatalf("Next = %s, %v; want %s", stage, err, want)
		}
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	locked := map[string]artifact.Digest{}
	for _, s := range rep.Locked.Skills {
		locked[s.Name] = s.TreeDigest
	}
	got := bodies()
	for _, stage := range []string{StageResearch, StageSpecification} {
		body := got[stage]
		if body == nil {
			t.Fatalf("the server saw no %s request", stage)
		}
		text, _ := lastUserText(t, body)
		if !strings.Contains(text, skillsPreamble) || !strings.Contains(text, "not\nmodified by rein") ||
			!strings.Contains(text, "wrapped by this request's contract and rules") {
			t.Errorf("%s: the request lacks the pinned-skills statement", stage)
		}
		wantSkillTree(t, text, root, "skills/careful", "### Skill careful@r1", locked["careful"],
			"SKILL.md", "logo.bin", "refs/checklist.md", "refs/deep/example.md")
		if strings.Contains(string(body), "CANARY-unmapped") {
			t.Errorf("%s: the skill with no stages reached the request", stage)
		}
		section := text[strings.Index(text, "\n## Pinned skills"):]
		t.Logf("%s: request body %d bytes, stage request text %d bytes, of which pinned skills %d", stage, len(body), len(text), len(section))
	}
	research, _ := lastUserText(t, got[StageResearch])
	if strings.Contains(research, "CANARY-speconly") || strings.Contains(research, "speconly") {
		t.Error("a skill mapped only to specification reached the research request")
	}
	spec, _ := lastUserText(t, got[StageSpecification])
	wantSkillTree(t, spec, root, "skills/speconly", "### Skill speconly@2", locked["speconly"], "SKILL.md", "templates/template.txt")
	// The fence around SKILL.md is longer than the fenced block inside it.
	if !strings.Contains(research, "````\n"+skillText) {
		t.Error("SKILL.md is not fenced with four backticks")
	}
}

// TestSkillDriftBeforeStage: a pinned skill edited after start blocks the run with
// run_skill_drift before any stage session starts.
func TestSkillDriftBeforeStage(t *testing.T) {
	env, id, root := startSkillRun(t, carefulFiles, mapSkills)
	write(t, filepath.Join(root, "skills", "careful", "refs", "deep", "example.md"), "Also guess.\n")
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		t.Fatal("a stage session started on a drifted skill")
		return nil, nil
	})
	_, err := Next(context.Background(), env, id)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("next = %v, want blocked", err)
	}
	wantBlocker(t, env, id, BlockSkillDrift)
}

// TestSkillDriftBetweenAttempts: a skill edited while an attempt runs is read for the next
// attempt's request, found to differ from its locked tree digest and recorded as
// run_skill_drift; no session is built with the changed text.
func TestSkillDriftBetweenAttempts(t *testing.T) {
	env, id, root := startSkillRun(t, carefulFiles, mapSkills)
	sessions := 0
	env.Agents = testAgents(env.Home, func(string, ModelPolicy) (llm.Model, error) {
		sessions++
		if sessions > 1 {
			t.Error("a second session was built after the skill drifted")
		}
		m, err := script.Parse([]byte(proseScenario), "prose.yaml")
		if err != nil {
			return nil, err
		}
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText+"Guess when unsure.\n")
			return m.Stream(ctx, req, emit)
		}), nil
	})
	_, err := Next(context.Background(), env, id)
	var be *BlockedError
	if !errors.As(err, &be) || len(be.Blockers) == 0 || be.Blockers[0].Code != BlockSkillDrift || be.Blockers[0].Input != "skill:careful" {
		t.Fatalf("next = %v, want run_skill_drift for skill:careful", err)
	}
	ks := kinds(t, env, id)
	if ks[len(ks)-1] != KindBlocked || slices.Index(ks, KindStageAttempt) != len(ks)-2 {
		t.Fatalf("ledger kinds = %v: want attempt 1 settled, then the drift recorded, and no attempt 2", ks)
	}
	rep, _ := Status(env, id)
	if len(rep.Attempts) == 0 || rep.Attempts[StageResearch] != 1 {
		t.Fatalf("attempts = %v, want one research attempt", rep.Attempts)
	}
}

// TestSkillLimitsRefuseStart: a skill over the per-skill text limit, or skills that together
// exceed the per-request limit of a stage they are mapped to, refuse the run's start with an
// error naming the skill (or the stage and its skills) and the limit; nothing is truncated.
func TestSkillLimitsRefuseStart(t *testing.T) {
	big := strings.Repeat("x", MaxSkillTextBytes/2) + "\n"
	// Three skills under the per-skill limit, over the per-request one together.
	part := strings.Repeat("y", MaxStageSkillBytes/3+1)
	for _, tc := range []struct {
		name  string
		files map[string]string
		edit  func(*Profile)
		want  string
	}{
		{"skill", map[string]string{"skills/huge/SKILL.md": big, "skills/huge/more.md": big}, func(p *Profile) {
			p.Skills = []Skill{{Name: "huge", Revision: "1", Path: "skills/huge"}}
		}, fmt.Sprintf("pinned skill huge has %d bytes of text, more than the %d a skill may send", 2*len(big), MaxSkillTextBytes)},
		{"files", func() map[string]string {
			m := map[string]string{}
			for i := range MaxSkillFiles + 1 {
				m[fmt.Sprintf("skills/many/f%02d.md", i)] = "x\n"
			}
			return m
		}(), func(p *Profile) {
			p.Skills = []Skill{{Name: "many", Revision: "1", Path: "skills/many"}}
		}, fmt.Sprintf("pinned skill many has %d files, more than the %d a skill may have", MaxSkillFiles+1, MaxSkillFiles)},
		{"stage", map[string]string{"skills/a/SKILL.md": part, "skills/b/SKILL.md": part, "skills/c/SKILL.md": part}, func(p *Profile) {
			p.Skills = []Skill{
				{Name: "a", Revision: "1", Path: "skills/a", Stages: []string{StageResearch, StageSpecification}},
				{Name: "b", Revision: "1", Path: "skills/b", Stages: []string{StageSpecification}},
				{Name: "c", Revision: "1", Path: "skills/c", Stages: []string{StageSpecification}},
			}
		}, "the skills mapped to stage specification (a, b, c) have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := startRefused(t, tc.files, tc.edit)
			if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start = %v\nwant ErrBlocked naming %q", err, tc.want)
			}
		})
	}
}

// startRefused is startSkillRun's setup, returning Start's error instead of failing on it.
func startRefused(t *testing.T, files map[string]string, edit func(*Profile)) error {
	t.Helper()
	env, root := Env{Home: t.TempDir(), Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, Workflow: DeliveryWorkflow()}, t.TempDir()
	write(t, filepath.Join(root, "req.md"), "# Do a thing\n")
	for p, s := range files {
		write(t, filepath.Join(root, filepath.FromSlash(p)), s)
	}
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	data, _ := p.Marshal()
	write(t, filepath.Join(root, ProfilePath), string(data))
	if _, err := Approve(root, "ana", time.Now()); err != nil {
		t.Fatal(err)
	}
	id, err := Start(env, StartOptions{Project: root, Requirement: filepath.Join(root, "req.md")})
	if err == nil {
		t.Fatalf("run %s started", id)
	}
	if _, serr := os.Stat(filepath.Join(root, RunsDir)); serr == nil {
		if entries, _ := os.ReadDir(filepath.Join(root, RunsDir)); len(entries) > 0 {
			t.Errorf("a refused start left %d run directories", len(entries))
		}
	}
	return err
}

// TestDraftProposesSkillStages: profile init pins every skill under .rein/skills/ and
// .agents/skills/ (a directory without SKILL.md is not a skill), maps each to every model
// stage, and says above the skills how to narrow the mapping; the draft validates.
func TestDraftProposesSkillStages(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".rein", "skills", "go-style", "SKILL.md"), "# Go style\n")
	write(t, filepath.Join(root, ".agents", "skills", "review-checks", "SKILL.md"), "# Review\n")
	write(t, filepath.Join(root, ".agents", "skills", "go-style", "SKILL.md"), "# shadowed\n")
	write(t, filepath.Join(root, ".agents", "skills", "notes", "README.md"), "not a skill\n")
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	all := []string{StageResearch, StageSpecification, StageTicketPlanning, "ticket-execution", "ticket-review"}
	want := []Skill{
		{Name: "go-style", Revision: "1", Path: ".rein/skills/go-style", Stages: all},
		{Name: "review-checks", Revision: "1", Path: ".agents/skills/review-checks", Stages: all},
	}
	if fmt.Sprint(p.Skills) != fmt.Sprint(want) {
		t.Fatalf("skills = %+v\nwant %+v", p.Skills, want)
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"# Pinned skills. Each skill's full tree (every file) goes into the requests of the stages in\n",
		"# skill to every model stage: narrow the list to the stages the skill is for.\n",
		"    stages: [research, specification, ticket-planning, ticket-execution, ticket-review]\n",
	} {
		if !strings.Contains(string(data), s) {
			t.Errorf("draft lacks %q:\n%s", s, data)
		}
	}
	back, err := ParseProfile(data)
	if err != nil {
		t.Fatalf("the draft does not validate: %v\n%s", err, data)
	}
	if fmt.Sprint(back.Skills) != fmt.Sprint(want) {
		t.Fatalf("parsed back: %+v", back.Skills)
	}
}
