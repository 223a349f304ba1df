package contextpack

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the Agent Skills format.
const (
	MaxSkillName          = 64
	MaxSkillDescription   = 1024
	MaxSkillCompatibility = 500
)

// skillFrontmatter holds the fields of the Agent Skills format that rein checks. Other fields
// (license, metadata, allowed-tools, and fields other agents add) are allowed and ignored.
type skillFrontmatter struct {
	Name          any `yaml:"name"`
	Description   any `yaml:"description"`
	Compatibility any `yaml:"compatibility"`
}

// ParseSkill parses a SKILL.md (already normalized: LF line ends, no BOM) of the skill
// directory named dirName and validates it against the Agent Skills format:
//
//   - the file starts with YAML frontmatter between two "---" lines;
//   - name: 1 to 64 characters, lowercase ASCII letters, digits and hyphens, neither starting
//     nor ending with a hyphen, no "--", and equal to dirName;
//   - description: a non-empty string of at most 1024 characters;
//   - compatibility, when present: a string of at most 500 characters.
//
// The returned Skill has no Path.
func ParseSkill(dirName string, data []byte) (Skill, error) {
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return Skill{}, errors.New("no YAML frontmatter: the file must start with a --- line")
	}
	body := data[len("---\n"):]
	end := -1
	for off := 0; off < len(body); {
		line, _, _ := bytes.Cut(body[off:], []byte("\n"))
		if string(bytes.TrimRight(line, " \t")) == "---" {
			end = off
			break
		}
		off += len(line) + 1
	}
	if end < 0 {
		return Skill{}, errors.New("the frontmatter has no closing --- line")
	}
	var fm skillFrontmatter
	if err := yaml.Unmarshal(body[:end], &fm); err != nil {
		return Skill{}, fmt.Errorf("frontmatter: %v", oneLine(err.Error()))
	}
	name, err := field("name", fm.Name, true)
	if err != nil {
		return Skill{}, err
	}
	if err := ValidSkillName(name); err != nil {
		return Skill{}, err
	}
	if name != dirName {
		return Skill{}, fmt.Errorf("name %q differs from its directory name %q", name, dirName)
	}
	desc, err := field("description", fm.Description, true)
	if err != nil {
		return Skill{}, err
	}
	if strings.TrimSpace(desc) == "" {
		return Skill{}, errors.New("description is empty")
	}
	if n := utf8.RuneCountInString(desc); n > MaxSkillDescription {
		return Skill{}, fmt.Errorf("description has %d characters, more than %d", n, MaxSkillDescription)
	}
	if c, err := field("compatibility", fm.Compatibility, false); err != nil {
		return Skill{}, err
	} else if n := utf8.RuneCountInString(c); n > MaxSkillCompatibility {
		return Skill{}, fmt.Errorf("compatibility has %d characters, more than %d", n, MaxSkillCompatibility)
	}
	return Skill{Name: name, Description: desc}, nil
}

// field returns a frontmatter value that must be a string.
func field(name string, v any, required bool) (string, error) {
	switch v := v.(type) {
	case nil:
		if required {
			return "", fmt.Errorf("%s is missing", name)
		}
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s must be a string, not %T", name, v)
	}
}

// ValidSkillName checks a skill name against the Agent Skills format.
func ValidSkillName(name string) error {
	switch {
	case name == "":
		return errors.New("name is empty")
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return fmt.Errorf("name %q starts or ends with a hyphen", name)
	case strings.Contains(name, "--"):
		return fmt.Errorf("name %q contains consecutive hyphens", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("name %q may hold only lowercase letters a-z, digits and hyphens", name)
		}
	}
	if len(name) > MaxSkillName {
		return fmt.Errorf("name has %d characters, more than %d", len(name), MaxSkillName)
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
