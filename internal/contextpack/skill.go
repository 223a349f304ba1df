package contextpack

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/lazyre"
)

// Limits of the Agent Skills format.
const (
	MaxSkillName          = 64
	MaxSkillDescription   = 1024
	MaxSkillCompatibility = 500
)

// skillFrontmatter holds the fields of the Agent Skills format that rein reads. Other fields
// (license, metadata, and fields other agents add) are allowed and ignored.
type skillFrontmatter struct {
	Name          any `yaml:"name"`
	Description   any `yaml:"description"`
	Compatibility any `yaml:"compatibility"`
	AllowedTools  any `yaml:"allowed-tools"`
	// Claude Code's extensions rein honours.
	DisableModelInvocation any `yaml:"disable-model-invocation"`
	UserInvocable          any `yaml:"user-invocable"`
}

// ParseSkill parses a SKILL.md (already normalized: LF line ends, no BOM) of the skill
// directory named dirName, following the Agent Skills specification and its client
// guidance: what makes a skill unusable is an error (the skill is skipped); what the guidance
// says to warn about and load anyway comes back as warnings.
//
// Errors (skip the skill):
//   - no YAML frontmatter between two "---" lines at the start of the file;
//   - frontmatter YAML that does not parse, even after the one fallback the guidance names:
//     a plain value holding ": " (description: Use when: …) is retried quoted;
//   - description missing, empty or not a string;
//   - name, compatibility or allowed-tools of the wrong type.
//
// Warnings (load the skill):
//   - name missing (the directory name is used), not equal to dirName, longer than 64
//     characters, or outside the format's lowercase letters, digits and single hyphens;
//   - description longer than 1024 characters, compatibility longer than 500;
//   - the fallback parse was needed.
//
// disable-model-invocation and user-invocable (Claude Code's fields) take true/false and
// yes/no, on/off, 1/0. allowed-tools is a space-separated string (commas also separate) or a
// YAML list. The returned Skill has no Path or Dir.
func ParseSkill(dirName string, data []byte) (Skill, []string, error) {
	front, body, err := splitFrontmatter(data)
	if err != nil {
		return Skill{}, nil, err
	}
	var warns []string
	var fm skillFrontmatter
	if err := yaml.Unmarshal(front, &fm); err != nil {
		fixed, changed := quoteColonValues(front)
		if !changed {
			return Skill{}, nil, fmt.Errorf("frontmatter: %v", oneLine(err.Error()))
		}
		fm = skillFrontmatter{}
		if err2 := yaml.Unmarshal(fixed, &fm); err2 != nil {
			return Skill{}, nil, fmt.Errorf("frontmatter: %v (also after quoting values that hold \": \")", oneLine(err.Error()))
		}
		warns = append(warns, "frontmatter is not valid YAML (an unquoted value holds \": \"); read with those values quoted: quote them in the file")
	}
	s := Skill{Body: string(body), UserInvocable: true}
	name, err := field("name", fm.Name, false)
	if err != nil {
		return Skill{}, nil, err
	}
	switch {
	case name == "":
		name = dirName
		warns = append(warns, fmt.Sprintf("name is missing; the directory name %q is used", dirName))
	case name != dirName:
		warns = append(warns, fmt.Sprintf("name %q differs from its directory name %q", name, dirName))
	}
	if err := ValidSkillName(name); err != nil {
		warns = append(warns, err.Error())
	}
	s.Name = name
	desc, err := field("description", fm.Description, true)
	if err != nil {
		return Skill{}, nil, err
	}
	if strings.TrimSpace(desc) == "" {
		return Skill{}, nil, errors.New("description is empty")
	}
	if n := utf8.RuneCountInString(desc); n > MaxSkillDescription {
		warns = append(warns, fmt.Sprintf("description has %d characters, more than %d; the index shows the first %d", n, MaxSkillDescription, MaxSkillDescription))
		desc = string([]rune(desc)[:MaxSkillDescription]) + "…"
	}
	s.Description = desc
	if c, err := field("compatibility", fm.Compatibility, false); err != nil {
		return Skill{}, nil, err
	} else if n := utf8.RuneCountInString(c); n > MaxSkillCompatibility {
		warns = append(warns, fmt.Sprintf("compatibility has %d characters, more than %d", n, MaxSkillCompatibility))
	}
	if s.AllowedTools, err = toolList(fm.AllowedTools); err != nil {
		return Skill{}, nil, err
	}
	var ok bool
	if s.DisableModelInvocation, ok = yamlBool(fm.DisableModelInvocation, false); !ok {
		warns = append(warns, fmt.Sprintf("disable-model-invocation %v is not a boolean; false is used", fm.DisableModelInvocation))
	}
	if s.UserInvocable, ok = yamlBool(fm.UserInvocable, true); !ok {
		warns = append(warns, fmt.Sprintf("user-invocable %v is not a boolean; true is used", fm.UserInvocable))
	}
	return s, warns, nil
}

// splitFrontmatter returns the YAML between the opening and closing "---" lines, and the
// body after them.
func splitFrontmatter(data []byte) (front, body []byte, err error) {
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, nil, errors.New("no YAML frontmatter: the file must start with a --- line")
	}
	rest := data[len("---\n"):]
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		if string(bytes.TrimRight(line, " \t")) == "---" {
			body = rest[min(len(rest), off+len(line)+1):]
			return rest[:off], body, nil
		}
		off += len(line) + 1
	}
	return nil, nil, errors.New("the frontmatter has no closing --- line")
}

// plainKeyValue is a top-level "key: value" line whose value is a plain (unquoted, not
// block, not flow) scalar.
var plainKeyValue = lazyre.Regexp{Expr: `^([A-Za-z0-9_-]+):[ \t]+([^ \t"'|>\[{&*!#%@` + "`" + `].*)$`}

// quoteColonValues is the fallback the client guidance names: every top-level plain value
// holding ": " (which YAML reads as a nested mapping) is written as a double-quoted string.
// It reports whether it changed anything.
func quoteColonValues(front []byte) ([]byte, bool) {
	lines := strings.Split(string(front), "\n")
	changed := false
	for i, l := range lines {
		m := plainKeyValue.FindStringSubmatch(l)
		if m == nil || !strings.Contains(m[2], ": ") {
			continue
		}
		v := strings.TrimRight(m[2], " \t")
		v = strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `"`, `\"`)
		lines[i] = m[1] + `: "` + v + `"`
		changed = true
	}
	return []byte(strings.Join(lines, "\n")), changed
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

// toolList reads allowed-tools: a string of entries separated by spaces or commas (spaces
// inside parentheses belong to the entry: "Bash(git add:*)"), or a list of strings.
func toolList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return splitTools(v), nil
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("allowed-tools entries must be strings, not %T", e)
			}
			out = append(out, splitTools(s)...)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("allowed-tools must be a string or a list of strings, not %T", v)
	}
}

func splitTools(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ' ' || r == '\t' || r == ',' || r == '\n'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// yamlBool reads a boolean field: YAML booleans, and the strings yes/no, on/off, 1/0,
// true/false in any case. ok is false for anything else (def is returned).
func yamlBool(v any, def bool) (value, ok bool) {
	switch v := v.(type) {
	case nil:
		return def, true
	case bool:
		return v, true
	case int:
		if v == 0 || v == 1 {
			return v == 1, true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	}
	return def, false
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
