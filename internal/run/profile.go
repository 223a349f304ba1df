package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/lazyre"
	"github.com/reinhq/rein/internal/strictyaml"
)

// Paths of the project's run inputs, relative to the project root.
const (
	ProfilePath  = ".rein/profile.yaml"
	ApprovalPath = ".rein/profile.approval.json"
	RunsDir      = ".rein/runs"
)

// ProfileVersion is the schema version of .rein/profile.yaml this package reads and writes.
const ProfileVersion = 1

// Roles of a delivery run (README, Delivery runs: Roles).
const (
	RoleWorkflow = "workflow"
	RoleWriter   = "writer"
	RoleReview   = "review"
)

// Roles lists every role in a fixed order.
var Roles = []string{RoleWorkflow, RoleWriter, RoleReview}

// Profile is the typed form of .rein/profile.yaml.
type Profile struct {
	Version      int                     `yaml:"version"`
	Guidance     []Guidance              `yaml:"guidance"`
	Verification map[string]Verification `yaml:"verification"`
	Skills       []Skill                 `yaml:"skills,omitempty"`
	Models       map[string]ModelPolicy  `yaml:"models"`
	Harness      Harness                 `yaml:"harness"`
}

// Guidance is a required guidance file (e.g. AGENTS.md) that may enter context, bound to the
// sha256 of its bytes.
type Guidance struct {
	Path   string `yaml:"path" json:"path"`
	Digest string `yaml:"digest" json:"digest"`
}

// Verification is one approved verification command: an argv run without a shell.
type Verification struct {
	Argv     []string `yaml:"argv" json:"argv"`
	Required bool     `yaml:"required" json:"required"`
}

// Skill is a pinned skill: a directory whose tree digest is locked at run start. Stages are the
// model stages whose requests carry the skill's full tree; a skill with none goes to no stage.
type Skill struct {
	Name     string   `yaml:"name" json:"name"`
	Revision string   `yaml:"revision" json:"revision"`
	Path     string   `yaml:"path" json:"path"`
	Stages   []string `yaml:"stages,omitempty" json:"stages,omitempty"`
}

// ModelPolicy is one role's model and budget.
type ModelPolicy struct {
	Provider string `yaml:"provider" json:"provider"`
	Model    string `yaml:"model" json:"model"`
	BaseURL  string `yaml:"baseUrl,omitempty" json:"baseUrl,omitempty"`
	Thinking string `yaml:"thinking,omitempty" json:"thinking,omitempty"`
	// Script is the scenario file (project-relative, slash-separated) of the offline script
	// provider: required with provider script, refused with any other.
	Script string `yaml:"script,omitempty" json:"script,omitempty"`
	Budget Budget `yaml:"budget" json:"budget"`
}

// Budget bounds one role's work: model turns, tokens and elapsed time (a Go duration).
type Budget struct {
	ModelTurns int    `yaml:"modelTurns" json:"modelTurns"`
	Tokens     int    `yaml:"tokens" json:"tokens"`
	Elapsed    string `yaml:"elapsed" json:"elapsed"`
}

// Harness is the harness the profile is compatible with; empty fields accept any.
type Harness struct {
	Version      string `yaml:"version,omitempty" json:"version"`
	BinaryDigest string `yaml:"binaryDigest,omitempty" json:"binaryDigest"`
}

// Problem is one validation failure, at a line of the profile file (0 when unknown): a
// strictyaml.Problem whose File is ProfilePath.
type Problem = strictyaml.Problem

// ProfileError lists every problem of an invalid profile. errors.Is(err, ErrInvalidProfile).
type ProfileError struct{ Problems []Problem }

func (e *ProfileError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid project profile:\n  " + strings.Join(parts, "\n  ")
}

func (e *ProfileError) Unwrap() error { return ErrInvalidProfile }

// LoadedProfile is a parsed and validated profile with the digest of its file's bytes.
type LoadedProfile struct {
	Profile
	Digest artifact.Digest
	Bytes  []byte
}

// LoadProfile reads, parses and validates root/.rein/profile.yaml.
func LoadProfile(root string) (*LoadedProfile, error) {
	data, err := os.ReadFile(filepath.Join(root, ProfilePath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist (draft one with `rein profile init`)", ErrNoProfile, ProfilePath)
	}
	if err != nil {
		return nil, err
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, err
	}
	return &LoadedProfile{Profile: *p, Digest: artifact.Sum(data), Bytes: data}, nil
}

// ParseProfile decodes a profile strictly (unknown fields refused) and validates it. Every
// problem is reported with its line.
func ParseProfile(data []byte) (*Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ProfileError{[]Problem{{File: ProfilePath, Msg: "the file is empty"}}}
		}
		return nil, &ProfileError{strictyaml.DecodeProblems(ProfilePath, err)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ProfileError{strictyaml.DecodeProblems(ProfilePath, err)}
	}
	if probs := p.validate(&doc); len(probs) > 0 {
		return nil, &ProfileError{probs}
	}
	return &p, nil
}

// lineOf returns the line of the node at the path of mapping keys and sequence indexes
// (strings and ints), or of the deepest node found on the way.
func lineOf(doc *yaml.Node, keys ...any) int { return strictyaml.Line(doc, keys...) }

// integer reports whether the node at the path, if any, is a YAML integer (the decoder
// truncates a float such as 2.5 into an int field silently).
func integer(doc *yaml.Node, keys ...any) bool {
	n, _ := strictyaml.NodeAt(doc, keys...)
	return n == nil || n.Tag == "!!int"
}

var (
	commandID  = lazyre.Regexp{Expr: `^[a-z][a-z0-9_-]{0,63}$`}
	thinkings  = []string{"", "off", "minimal", "low", "medium", "high"}
	skillNames = lazyre.Regexp{Expr: `^[a-z0-9][a-z0-9._-]{0,63}$`}
)

// validate returns every problem of p; doc is the parsed YAML for line numbers.
func (p *Profile) validate(doc *yaml.Node) []Problem {
	var probs []Problem
	add := func(field, msg string, keys ...any) {
		probs = append(probs, Problem{File: ProfilePath, Line: lineOf(doc, keys...), Field: field, Msg: msg})
	}
	if p.Version != ProfileVersion {
		add("version", fmt.Sprintf("must be %d, not %d", ProfileVersion, p.Version), "version")
	}
	seen := map[string]bool{}
	for i, g := range p.Guidance {
		f := fmt.Sprintf("guidance[%d]", i)
		if msg := relPathProblem(g.Path); msg != "" {
			add(f+".path", msg, "guidance", i, "path")
		} else if seen[g.Path] {
			add(f+".path", "duplicate path "+g.Path, "guidance", i, "path")
		}
		seen[g.Path] = true
		if _, err := artifact.ParseDigest(g.Digest); err != nil {
			add(f+".digest", "must be sha256:<64 lowercase hex> (the sha256 of the file's bytes)", "guidance", i, "digest")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.Verification)) {
		v := p.Verification[id]
		f := "verification." + id
		if !commandID.MatchString(id) {
			add(f, "a command id is 1-64 of a-z 0-9 _ - starting with a letter", "verification", id)
		}
		if len(v.Argv) == 0 || v.Argv[0] == "" {
			add(f+".argv", "must name a program and its arguments (no shell)", "verification", id)
		}
	}
	seen = map[string]bool{}
	for i, s := range p.Skills {
		f := fmt.Sprintf("skills[%d]", i)
		if !skillNames.MatchString(s.Name) {
			add(f+".name", "a skill name is 1-64 of a-z 0-9 . _ -", "skills", i, "name")
		} else if seen[s.Name] {
			add(f+".name", "duplicate skill "+s.Name, "skills", i, "name")
		}
		seen[s.Name] = true
		if s.Revision == "" {
			add(f+".revision", "a pinned skill needs a revision", "skills", i)
		}
		if msg := relPathProblem(s.Path); msg != "" {
			add(f+".path", msg, "skills", i, "path")
		}
		stages := skillStages()
		for j, st := range s.Stages {
			g := fmt.Sprintf("%s.stages[%d]", f, j)
			switch {
			case !slices.Contains(stages, st):
				add(g, fmt.Sprintf("unknown stage %q: a skill goes to model stages only (%s)", st, strings.Join(stages, ", ")), "skills", i, "stages", j)
			case slices.Index(s.Stages, st) < j:
				add(g, "duplicate stage "+st, "skills", i, "stages", j)
			}
		}
	}
	for role := range p.Models {
		if !slices.Contains(Roles, role) {
			add("models."+role, "unknown role (roles: workflow, writer, review)", "models", role)
		}
	}
	for _, role := range Roles {
		m, ok := p.Models[role]
		f := "models." + role
		if !ok {
			add(f, "missing: every role (workflow, writer, review) needs a model policy", "models")
			continue
		}
		if m.Provider == "" {
			add(f+".provider", "required", "models", role)
		}
		if m.Model == "" {
			add(f+".model", "required", "models", role)
		}
		switch {
		case m.Provider == "script" && m.Script == "":
			add(f+".script", "required with provider script: the scenario file (docs/script-format.md)", "models", role)
		case m.Provider != "script" && m.Script != "":
			add(f+".script", "only for provider script", "models", role, "script")
		case m.Script != "" && (path.IsAbs(m.Script) || path.Clean(m.Script) != m.Script || strings.HasPrefix(m.Script, "../") || strings.Contains(m.Script, "\\")):
			add(f+".script", "must be a clean project-relative path with forward slashes", "models", role, "script")
		}
		if !slices.Contains(thinkings, m.Thinking) {
			add(f+".thinking", "must be one of off, minimal, low, medium, high", "models", role, "thinking")
		}
		if m.Budget.ModelTurns <= 0 || !integer(doc, "models", role, "budget", "modelTurns") {
			add(f+".budget.modelTurns", "must be a positive number (a whole number)", "models", role, "budget", "modelTurns")
		}
		if m.Budget.Tokens <= 0 || !integer(doc, "models", role, "budget", "tokens") {
			add(f+".budget.tokens", "must be a positive number (a whole number)", "models", role, "budget", "tokens")
		}
		if d, err := time.ParseDuration(m.Budget.Elapsed); err != nil || d <= 0 {
			add(f+".budget.elapsed", "must be a positive duration such as 30m or 1h", "models", role, "budget", "elapsed")
		}
	}
	w, okW := p.Models[RoleWriter]
	r, okR := p.Models[RoleReview]
	if okW && okR && w.Model != "" && w.Provider == r.Provider && w.Model == r.Model {
		add("models.review.model", "review_model_must_differ_from_writer: the review model must differ from the writer model ("+w.Provider+"/"+w.Model+")", "models", RoleReview, "model")
	}
	if p.Harness.BinaryDigest != "" {
		if _, err := artifact.ParseDigest(p.Harness.BinaryDigest); err != nil {
			add("harness.binaryDigest", "must be sha256:<64 lowercase hex>", "harness", "binaryDigest")
		}
	}
	slices.SortStableFunc(probs, func(a, b Problem) int { return a.Line - b.Line })
	return probs
}

// relPathProblem says what is wrong with a project-relative, slash-separated path, or "".
func relPathProblem(p string) string {
	switch {
	case p == "":
		return "required"
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || strings.Contains(p, `\`):
		return "must be relative to the project root, with / separators"
	case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return "must be a clean path inside the project (no . or .. elements, no trailing /)"
	}
	return ""
}

// DefaultBudget returns the delivery-run design's (README, Delivery runs) default budget of a role.
func DefaultBudget(role string) Budget {
	if role == RoleReview {
		return Budget{ModelTurns: 10, Tokens: 60000, Elapsed: "30m"}
	}
	return Budget{ModelTurns: 20, Tokens: 120000, Elapsed: "1h"}
}
