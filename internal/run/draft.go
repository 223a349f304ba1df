package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/internal/artifact"
)

// guidanceCandidates are the guidance files Draft looks for at the project root.
var guidanceCandidates = []string{"AGENTS.md", "CLAUDE.md"}

// Draft builds a profile from what it detects in root: go.mod makes `go test ./...` a required
// verification command (and `go vet ./...` an optional one); AGENTS.md and CLAUDE.md become
// required guidance with their digests. Models get DELIVERY.md's default budgets and a review
// model that differs from the writer's; the harness is pinned to harnessVersion. A person
// reviews the draft before approving it.
func Draft(root, harnessVersion string) (*Profile, error) {
	p := &Profile{Version: ProfileVersion, Verification: map[string]Verification{}, Models: map[string]ModelPolicy{}}
	for _, name := range guidanceCandidates {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		p.Guidance = append(p.Guidance, Guidance{Path: name, Digest: string(artifact.Sum(data))})
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
		p.Verification["test"] = Verification{Argv: []string{"go", "test", "./..."}, Required: true}
		p.Verification["vet"] = Verification{Argv: []string{"go", "vet", "./..."}}
	}
	for _, role := range Roles {
		m := ModelPolicy{Provider: "anthropic", Model: "claude-sonnet-4-5", Thinking: "medium", Budget: DefaultBudget(role)}
		if role == RoleReview {
			m.Model = "claude-opus-4-1"
		}
		p.Models[role] = m
	}
	p.Harness.Version = harnessVersion
	return p, nil
}

// Marshal renders p as profile YAML with a header comment.
func (p *Profile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# rein project profile (draft by `rein profile init`): review every entry, then run\n# `rein profile approve`. Any later edit needs a new approval.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
