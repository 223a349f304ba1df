package view

import (
	"fmt"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/linediff"
	"github.com/reinhq/rein/internal/termtext"
)

// Input is one input an artifact was made from, with its digest ("" when unknown).
type Input struct {
	ID     string
	Digest string
}

// Artifact is what Render shows: the file's bytes as read now, and what the run ledger
// recorded about it.
type Artifact struct {
	ID, Path   string
	Digest     string // the digest the run ledger recorded
	FileDigest string // the file digest the run ledger recorded
	MadeBy     string // e.g. "stage specification, attempt 2"
	Inputs     []Input
	Data       []byte
	// Ref resolves a reference id in the artifact's JSON to the digest of the run's artifact
	// of that id; nil resolves nothing.
	Ref func(id string) (digest string, ok bool)
}

// Render returns a's rendered form (see the package documentation). Only a file that is not
// an artifact at all (invalid UTF-8, an unclosed frontmatter) is an error.
func Render(a Artifact) (string, error) {
	parsed, err := artifact.Parse(a.Data)
	if err != nil {
		return "", fmt.Errorf("%s (%s): %w", a.ID, a.Path, err)
	}
	var b strings.Builder
	header(&b, a, parsed)
	b.WriteString("\n")
	body(&b, a, string(parsed.Body))
	return termtext.Visible(b.String()), nil
}

// Raw returns the file's bytes, made safe for a terminal.
func Raw(a Artifact) string { return termtext.Visible(string(a.Data)) }

// diffContextLines is the number of unchanged lines around each hunk of [Diff].
const diffContextLines = 3

// Diff returns the unified diff of two rendered forms, "" when they are equal.
func Diff(oldLabel, newLabel, old, new string) string {
	if old == new {
		return ""
	}
	// A failure here would mean edits that do not fit old, which Lines never returns.
	d, err := linediff.Unified(termtext.Visible(oldLabel), termtext.Visible(newLabel), old, linediff.Lines(old, new), diffContextLines)
	if err != nil {
		return fmt.Sprintf("(no line diff: %v)\n", err)
	}
	return d
}

// shownKeys are the frontmatter fields the header shows besides id (which the run ledger
// recorded too); inputReferences is shown as the inputs.
var shownKeys = []string{"type", "schemaVersion", "run", "stage", "attempt", "created"}

func header(b *strings.Builder, a Artifact, p *artifact.Artifact) {
	fm := frontmatter(p.Frontmatter)
	fmt.Fprintf(b, "artifact: %s\npath: %s\ndigest: %s\nfile digest: %s\n", a.ID, a.Path, orNone(a.Digest), orNone(a.FileDigest))
	if a.Digest != "" && string(p.Digest) != a.Digest {
		fmt.Fprintf(b, "WARNING: the file's digest is now %s, not the recorded %s: its body changed after it was recorded\n", p.Digest, a.Digest)
	} else if a.FileDigest != "" && string(p.FileDigest) != a.FileDigest {
		fmt.Fprintf(b, "WARNING: the file's bytes changed after they were recorded (file digest now %s); its body digest is unchanged\n", p.FileDigest)
	}
	if a.MadeBy != "" {
		fmt.Fprintf(b, "made by: %s\n", a.MadeBy)
	}
	for _, k := range shownKeys {
		if v, ok := fm[k]; ok {
			fmt.Fprintf(b, "%s: %s\n", words(k), v)
		}
	}
	inputs := a.Inputs
	if len(inputs) == 0 {
		b.WriteString("inputs: (none recorded)\n")
		return
	}
	b.WriteString("inputs:\n")
	for _, in := range inputs {
		fmt.Fprintf(b, "  - %s %s\n", in.ID, orNone(in.Digest))
	}
}

// segment is a run of body lines: prose, or the inside of a closed ```json fence.
type segment struct {
	text string
	json bool
}

// segments splits a body into prose and fenced JSON blocks. A fence that is never closed is
// prose.
func segments(text string) []segment {
	var out []segment
	var prose strings.Builder
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\n") != "```json" {
			prose.WriteString(lines[i])
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimRight(lines[end], "\n") != "```" {
			end++
		}
		if end == len(lines) {
			prose.WriteString(strings.Join(lines[i:], ""))
			break
		}
		if prose.Len() > 0 {
			out = append(out, segment{text: prose.String()})
			prose.Reset()
		}
		out = append(out, segment{text: strings.Join(lines[i+1:end], ""), json: true})
		i = end
	}
	if prose.Len() > 0 {
		out = append(out, segment{text: prose.String()})
	}
	return out
}

// jsonBlocks returns the insides of a body's closed JSON fences.
func jsonBlocks(text string) []string {
	var out []string
	for _, s := range segments(text) {
		if s.json {
			out = append(out, s.text)
		}
	}
	return out
}

// body prints the body, each fenced JSON block as sections.
func body(b *strings.Builder, a Artifact, text string) {
	for _, s := range segments(text) {
		if !s.json {
			b.WriteString(s.text)
			continue
		}
		n, err := parseJSON([]byte(s.text))
		if err != nil {
			fmt.Fprintf(b, "(this block is not valid JSON: %v; shown as written)\n```json\n%s```\n", err, s.text)
			continue
		}
		(&printer{b: b, ref: a.Ref}).top(n)
	}
}

// frontmatter returns the scalar fields of a frontmatter block as written (Parse checked it
// is one mapping).
func frontmatter(fm []byte) map[string]string {
	out := map[string]string{}
	var doc yaml.Node
	if fm == nil || yaml.Unmarshal(fm, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if v := m.Content[i+1]; v.Kind == yaml.ScalarNode {
			out[m.Content[i].Value] = v.Value
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// words spells a camelCase key as lower-case words: "specItemIds" → "spec item ids"; a run
// of capitals stays one word ("baseURL" → "base URL").
func words(key string) string {
	rs := []rune(key)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				b.WriteByte(' ')
			}
			if nextLower || (!unicode.IsUpper(rs[i-1]) && (i+1 == len(rs) || !unicode.IsUpper(rs[i+1]))) {
				r = unicode.ToLower(r)
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// title is words with its first letter in upper case.
func title(key string) string {
	w := []rune(words(key))
	if len(w) > 0 {
		w[0] = unicode.ToUpper(w[0])
	}
	return string(w)
}
