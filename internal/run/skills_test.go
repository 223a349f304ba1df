package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
)

const skillText = "# Careful research\n\nCite the pack for every fact.\n"

// startSkillRun starts a run whose profile pins one skill.
func startSkillRun(t *testing.T) (Env, string, string) {
	t.Helper()
	env, root := Env{Home: t.TempDir(), Harness: Harness{Version: "v1", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, Workflow: DeliveryWorkflow()}, t.TempDir()
	env.Agents = testAgents(env.Home, nil)
	write(t, filepath.Join(root, "go.mod"), "module example.com/x\n")
	write(t, filepath.Join(root, "AGENTS.md"), "# rules\n")
	write(t, filepath.Join(root, "req.md"), "# Do a thing\n")
	write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i"}} {
		if _, err := git(root, args...); err != nil {
			t.Skip("git: ", err)
		}
	}
	p, err := Draft(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	p.Skills = []Skill{{Name: "careful", Revision: "r1", Path: "skills/careful"}}
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

// TestRequestCarriesPinnedSkill: the stage request holds the pinned skill's full SKILL.md text
// with its file digest and its locked tree digest.
func TestRequestCarriesPinnedSkill(t *testing.T) {
	env, id, root := startSkillRun(t)
	tree, err := SkillTreeDigest(filepath.Join(root, "skills", "careful"))
	if err != nil {
		t.Fatal(err)
	}
	var first string
	env.Agents = testAgents(env.Home, func(_ string, p ModelPolicy) (llm.Model, error) {
		m, err := script.Parse([]byte(researchScenario), "scenario.yaml")
		if err != nil {
			return nil, err
		}
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			if first == "" {
				for _, c := range req.Messages[0].Content {
					first += c.Text
				}
			}
			return m.Stream(ctx, req, emit)
		}), nil
	})
	if _, err := Next(context.Background(), env, id); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{RequestPrefix(id), "## Pinned skills", "### Skill careful@r1", "SKILL.md digest: " + string(artifact.Sum([]byte(skillText))), "tree digest: " + string(tree), strings.TrimSpace(skillText)} {
		if !strings.Contains(first, want) {
			t.Errorf("request lacks %q:\n%s", want, first)
		}
	}
}

// TestSkillDriftBeforeStage: a pinned skill edited after start blocks the run with
// run_skill_drift before any stage session starts.
func TestSkillDriftBeforeStage(t *testing.T) {
	env, id, root := startSkillRun(t)
	write(t, filepath.Join(root, "skills", "careful", "SKILL.md"), skillText+"Also guess.\n")
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
