package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/artifact"
)

// guidanceCandidates are the guidance files Draft looks for at the project root.
var guidanceCandidates = []string{"AGENTS.md", "CLAUDE.md"}

// skillDirs are the project-root directories Draft looks in for skills (one directory each,
// holding a SKILL.md), in this order; the first to claim a name keeps it.
var skillDirs = []string{".rein/skills", ".agents/skills"}

// Draft builds a profile from what it detects in root: go.mod makes `go test ./...` a required
// verification command (and `go vet ./...` an optional one); AGENTS.md and CLAUDE.md become
// required guidance with their digests; every skill under .rein/skills/ and .agents/skills/
// becomes a pinned skill (revision "1") mapped to every model stage, for the person to narrow
// (see [Profile.Marshal]). Models get the delivery-run design's (README, Delivery runs) default budgets and a review model that
// differs from the writer's; the harness is pinned to harnessVersion. A person reviews the draft
// before approving it.
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
	skills, err := draftSkills(root)
	if err != nil {
		return nil, err
	}
	p.Skills = skills
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

// draftSkills returns a pinned skill for each directory of skillDirs that holds a regular
// SKILL.md and whose name is a valid skill name, mapped to every model stage.
func draftSkills(root string) ([]Skill, error) {
	var skills []Skill
	seen := map[string]bool{}
	for _, dir := range skillDirs {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() || !skillNames.MatchString(e.Name()) || seen[e.Name()] {
				continue
			}
			if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir), e.Name(), "SKILL.md")); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			seen[e.Name()] = true
			skills = append(skills, Skill{Name: e.Name(), Revision: "1", Path: dir + "/" + e.Name(), Stages: skillStages()})
		}
	}
	return skills, nil
}

// skillsComment heads the skills of a drafted profile.
func skillsComment() string {
	return fmt.Sprintf(`Pinned skills. Each skill's full tree (every file) goes into the requests of the stages in
its stages list and only those; a skill without stages goes to none. The draft maps each
skill to every model stage: narrow the list to the stages the skill is for.
Model stages: %s.
Limits: %d files and %d KiB of text a skill, %d KiB of skill text a stage request.`,
		strings.Join(skillStages(), ", "), MaxSkillFiles, MaxSkillTextBytes>>10, MaxStageSkillBytes>>10)
}

// Marshal renders p as profile YAML with a header comment (and one on its skills).
func (p *Profile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# rein project profile (draft by `rein profile init`): review every entry, then run\n# `rein profile approve`. Any later edit needs a new approval.\n")
	var doc yaml.Node
	if err := doc.Encode(p); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "skills" {
			continue
		}
		doc.Content[i].HeadComment = skillsComment()
		for _, skill := range doc.Content[i+1].Content {
			for k := 0; k+1 < len(skill.Content); k += 2 {
				if skill.Content[k].Value == "stages" {
					skill.Content[k+1].Style = yaml.FlowStyle
				}
			}
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
