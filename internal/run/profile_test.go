package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodProfile = `version: 1
guidance:
  - path: AGENTS.md
    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
verification:
  test:
    argv: [go, test, ./...]
    required: true
skills:
  - name: go-style
    revision: "3"
    path: .rein/skills/go-style
models:
  workflow: {provider: anthropic, model: a, budget: {modelTurns: 20, tokens: 120000, elapsed: 1h}}
  writer: {provider: anthropic, model: a, thinking: low, budget: {modelTurns: 20, tokens: 120000, elapsed: 1h}}
  review: {provider: anthropic, model: b, budget: {modelTurns: 10, tokens: 60000, elapsed: 30m}}
harness:
  version: dev
`

func TestProfileValidation(t *testing.T) {
	if _, err := ParseProfile([]byte(goodProfile)); err != nil {
		t.Fatalf("good profile: %v", err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown field", "harness:\n", "colour: red\nharness:\n", "profile.yaml:17: field colour not found"},
		{"version", "version: 1", "version: 2", "profile.yaml:1: version: must be 1, not 2"},
		{"bad digest", "digest: sha256:0000", "digest: md5:0000", "profile.yaml:4: guidance[0].digest: must be sha256"},
		{"absolute guidance", "path: AGENTS.md", "path: /etc/AGENTS.md", "profile.yaml:3: guidance[0].path: must be relative"},
		{"climbing skill path", "path: .rein/skills/go-style", "path: ../x", "profile.yaml:12: skills[0].path: must be a clean path"},
		{"empty argv", "argv: [go, test, ./...]", "argv: []", "profile.yaml:6: verification.test.argv: must name a program"},
		{"same review model", "model: b", "model: a", "profile.yaml:16: models.review.model: review_model_must_differ_from_writer"},
		{"bad elapsed", "elapsed: 30m", "elapsed: soon", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"zero turns", "modelTurns: 10", "modelTurns: 0", "profile.yaml:16: models.review.budget.modelTurns: must be a positive number"},
		// Budgets are finite positive numbers: no NaN, infinity, overflow, fraction or sign.
		{"turns -3", "modelTurns: 10", "modelTurns: -3", "profile.yaml:16: "},
		{"turns .nan", "modelTurns: 10", "modelTurns: .nan", "profile.yaml:16: "},
		{"turns .inf", "modelTurns: 10", "modelTurns: .inf", "profile.yaml:16: "},
		{"turns -.inf", "modelTurns: 10", "modelTurns: -.inf", "profile.yaml:16: "},
		{"turns 1e400", "modelTurns: 10", "modelTurns: 1e400", "profile.yaml:16: "},
		{"turns 2.5", "modelTurns: 10", "modelTurns: 2.5", "profile.yaml:16: "},
		{"turns 99999999999999999999999", "modelTurns: 10", "modelTurns: 99999999999999999999999", "profile.yaml:16: "},
		{"tokens -1", "tokens: 60000", "tokens: -1", "profile.yaml:16: "},
		{"tokens .nan", "tokens: 60000", "tokens: .nan", "profile.yaml:16: "},
		{"tokens 1e400", "tokens: 60000", "tokens: 1e400", "profile.yaml:16: "},
		{"tokens -0", "tokens: 60000", "tokens: -0", "profile.yaml:16: "},
		{"tokens 1.5", "tokens: 60000", "tokens: 1.5", "profile.yaml:16: models.review.budget.tokens: must be a positive number"},
		{"elapsed -5m", "elapsed: 30m", "elapsed: -5m", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed 0s", "elapsed: 30m", "elapsed: 0s", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed -0s", "elapsed: 30m", "elapsed: -0s", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed NaN", "elapsed: 30m", "elapsed: NaN", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed Inf", "elapsed: 30m", "elapsed: Inf", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed 1e400h", "elapsed: 30m", "elapsed: 1e400h", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed 9999999999h", "elapsed: 30m", "elapsed: 9999999999h", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"elapsed 30", "elapsed: 30m", "elapsed: 30", "profile.yaml:16: models.review.budget.elapsed: must be a positive duration"},
		{"missing role", "  review: {provider: anthropic, model: b, budget: {modelTurns: 10, tokens: 60000, elapsed: 30m}}\n", "", "profile.yaml:13: models.review: missing"},
		{"unknown role", "  review:", "  boss: {provider: x, model: y, budget: {modelTurns: 1, tokens: 1, elapsed: 1s}}\n  review:", "profile.yaml:16: models.boss: unknown role"},
		{"bad thinking", "thinking: low", "thinking: max", "profile.yaml:15: models.writer.thinking: must be one of"},
		{"wrong type", "tokens: 60000", "tokens: many", "profile.yaml:16: cannot unmarshal"},
		{"script without scenario", "workflow: {provider: anthropic,", "workflow: {provider: script,", "profile.yaml:14: models.workflow.script: required with provider script"},
		{"scenario without script", "workflow: {provider: anthropic, model: a,", "workflow: {provider: anthropic, model: a, script: s.yaml,", "profile.yaml:14: models.workflow.script: only for provider script"},
		{"scenario outside", "workflow: {provider: anthropic, model: a,", "workflow: {provider: script, model: a, script: ../s.yaml,", "profile.yaml:14: models.workflow.script: must be a clean project-relative path"},
		{"bad binary digest", "  version: dev\n", "  version: dev\n  binaryDigest: abc\n", "profile.yaml:19: harness.binaryDigest: must be sha256"},
		// A skill's stages are model stage ids of the workflow, each once.
		{"unknown stage", "path: .rein/skills/go-style\n", "path: .rein/skills/go-style\n    stages:\n      - research\n      - reserch\n", `profile.yaml:15: skills[0].stages[1]: unknown stage "reserch": a skill goes to model stages only (research, specification, ticket-planning, ticket-execution, ticket-review)`},
		{"gate as stage", "path: .rein/skills/go-style\n", "path: .rein/skills/go-style\n    stages: [spec-gate]\n", `profile.yaml:13: skills[0].stages[0]: unknown stage "spec-gate"`},
		{"duplicate stage", "path: .rein/skills/go-style\n", "path: .rein/skills/go-style\n    stages:\n      - specification\n      - research\n      - specification\n", "profile.yaml:16: skills[0].stages[2]: duplicate stage specification"},
		{"stages not a list", "path: .rein/skills/go-style\n", "path: .rein/skills/go-style\n    stages: research\n", "profile.yaml:13: cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(goodProfile, tc.old, tc.new, 1)
			if src == goodProfile {
				t.Fatalf("replacement %q did not apply", tc.old)
			}
			_, err := ParseProfile([]byte(src))
			if !errors.Is(err, ErrInvalidProfile) {
				t.Fatalf("err = %v, want ErrInvalidProfile", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestProfileSkillStages: a skill's stages are decoded in order; a skill without stages has
// none (it goes to no stage request).
func TestProfileSkillStages(t *testing.T) {
	p, err := ParseProfile([]byte(goodProfile))
	if err != nil || len(p.Skills) != 1 || p.Skills[0].Stages != nil {
		t.Fatalf("without stages: %+v, %v", p, err)
	}
	src := strings.Replace(goodProfile, "path: .rein/skills/go-style\n", "path: .rein/skills/go-style\n    stages: [ticket-review, specification]\n", 1)
	p, err = ParseProfile([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Skills[0].Stages, ","); got != "ticket-review,specification" {
		t.Fatalf("stages = %s", got)
	}
}

func TestApprovalInvalidatedByEdit(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/x\n")
	write(t, filepath.Join(root, "AGENTS.md"), "# rules\n")
	p, err := Draft(root, "dev")
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, ProfilePath), string(data))
	if _, err := RequireApproved(root); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("unapproved: err = %v", err)
	}
	if _, err := Approve(root, "ana", time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	lp, err := RequireApproved(root)
	if err != nil {
		t.Fatalf("approved: %v", err)
	}
	if v := lp.Verification["test"]; !v.Required || strings.Join(v.Argv, " ") != "go test ./..." {
		t.Fatalf("draft verification = %+v", lp.Verification)
	}
	if len(lp.Guidance) != 1 || lp.Guidance[0].Path != "AGENTS.md" {
		t.Fatalf("draft guidance = %+v", lp.Guidance)
	}
	write(t, filepath.Join(root, ProfilePath), string(data)+"# a comment is an edit too\n")
	_, err = RequireApproved(root)
	if !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), "approval invalid: the profile changed since ana approved") {
		t.Fatalf("edited: err = %v", err)
	}
}

func TestWorkflowDigestStable(t *testing.T) {
	w := DeliveryWorkflow()
	if w.Digest() != DeliveryWorkflow().Digest() {
		t.Fatal("digest not deterministic")
	}
	if len(w.Stages) != 17 || w.Stages[0].ID != StagePreflight || w.Stages[len(w.Stages)-1].ID != StageDeliveryReady {
		t.Fatalf("stages = %+v", w.Stages)
	}
	w.Stages[1].Role = RoleWriter
	if w.Digest() == DeliveryWorkflow().Digest() {
		t.Fatal("a changed stage kept the digest")
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
