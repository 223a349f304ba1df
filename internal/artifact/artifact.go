package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// NormalizationVersion identifies the normalization that Parse applies before computing
// Digest. Any change to the algorithm (see the package documentation) is a new version: digests
// computed under different versions are not comparable.
const NormalizationVersion = 1

// Artifact is a parsed artifact file.
type Artifact struct {
	// Frontmatter is the YAML text between the two "---" lines, with line endings normalized to
	// LF and every line (the last included) terminated by LF. It is nil when the file has no
	// frontmatter and empty (not nil) for an empty block.
	Frontmatter []byte
	// Body is the normalized body: the bytes Digest is computed over.
	Body []byte
	// Digest is the digest of Body.
	Digest Digest
	// FileDigest is the digest of the file's bytes, exactly as read.
	FileDigest Digest
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// Parse splits an artifact file into frontmatter and body, normalizes the body (version
// NormalizationVersion) and computes both digests. A frontmatter block, when present, must be
// one YAML mapping (possibly empty) without duplicate keys; its fields are not interpreted here
// (see DecodeFrontmatter). Errors wrap ErrMalformed.
func Parse(data []byte) (*Artifact, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	text := toLF(bytes.TrimPrefix(data, bom))
	fm, body, err := split(text)
	if err != nil {
		return nil, err
	}
	if fm != nil {
		if err := checkMapping(fm); err != nil {
			return nil, err
		}
	}
	norm := normalizeBody(body)
	return &Artifact{Frontmatter: fm, Body: norm, Digest: Sum(norm), FileDigest: Sum(data)}, nil
}

// Normalize returns the normalized body of an artifact file: Parse(data).Body.
func Normalize(data []byte) ([]byte, error) {
	a, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return a.Body, nil
}

// Digests returns the digest (normalized body) and the fileDigest (exact bytes) of an artifact
// file.
func Digests(data []byte) (digest, fileDigest Digest, err error) {
	a, err := Parse(data)
	if err != nil {
		return "", "", err
	}
	return a.Digest, a.FileDigest, nil
}

// DecodeFrontmatter decodes the frontmatter into v strictly: every key must be a field of v
// (yaml KnownFields), duplicate keys are refused, and exactly one YAML document is allowed. An
// artifact without frontmatter is an error (wrapping ErrMalformed); an empty block decodes
// nothing and leaves v as it is.
func (a *Artifact) DecodeFrontmatter(v any) error {
	if a.Frontmatter == nil {
		return fmt.Errorf("%w: the file has no frontmatter", ErrMalformed)
	}
	dec := yaml.NewDecoder(bytes.NewReader(a.Frontmatter))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("%w: frontmatter: %w", ErrMalformed, err)
	}
	return nil
}

// toLF turns every CR LF pair into LF and every remaining CR into LF, in one left-to-right
// scan. It returns text itself when it holds no CR.
func toLF(text []byte) []byte {
	i := bytes.IndexByte(text, '\r')
	if i < 0 {
		return text
	}
	out := make([]byte, 0, len(text))
	for i >= 0 {
		out = append(out, text[:i]...)
		out = append(out, '\n')
		text = text[i+1:]
		if len(text) > 0 && text[0] == '\n' {
			text = text[1:]
		}
		i = bytes.IndexByte(text, '\r')
	}
	return append(out, text...)
}

// nextLine returns the line of text starting at off (without its LF) and the offset after it.
func nextLine(text []byte, off int) (line []byte, next int) {
	if j := bytes.IndexByte(text[off:], '\n'); j >= 0 {
		return text[off : off+j], off + j + 1
	}
	return text[off:], len(text)
}

// trimEnd removes trailing spaces and tabs.
func trimEnd(line []byte) []byte {
	n := len(line)
	for n > 0 && (line[n-1] == ' ' || line[n-1] == '\t') {
		n--
	}
	return line[:n]
}

func isDelimiter(line []byte) bool { return string(trimEnd(line)) == "---" }

// split separates LF text into frontmatter (nil when absent) and body.
func split(text []byte) (fm, body []byte, err error) {
	if len(text) == 0 {
		return nil, text, nil
	}
	first, off := nextLine(text, 0)
	if !isDelimiter(first) {
		return nil, text, nil
	}
	start := off
	for off < len(text) {
		lineStart := off
		var line []byte
		line, off = nextLine(text, off)
		if isDelimiter(line) {
			fm = append(make([]byte, 0, lineStart-start), text[start:lineStart]...)
			return fm, text[off:], nil
		}
	}
	return nil, nil, fmt.Errorf("%w: frontmatter opened by \"---\" on line 1 is never closed", ErrMalformed)
}

// checkMapping checks that fm is empty or exactly one YAML mapping without duplicate keys.
func checkMapping(fm []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(fm))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("%w: frontmatter: %w", ErrMalformed, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("%w: frontmatter: %w", ErrMalformed, err)
		}
		return fmt.Errorf("%w: frontmatter holds more than one YAML document", ErrMalformed)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 0 {
		return nil
	}
	node := &doc
	if node.Kind == yaml.DocumentNode {
		node = node.Content[0]
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: frontmatter is not a YAML mapping (line %d)", ErrMalformed, node.Line)
	}
	// Decoding into a map is what makes the YAML library refuse duplicate keys.
	var m map[string]any
	if err := node.Decode(&m); err != nil {
		return fmt.Errorf("%w: frontmatter: %w", ErrMalformed, err)
	}
	return nil
}

// normalizeBody applies the per-line rules of the normalization to LF text: trailing spaces and
// tabs removed from every line, leading and trailing empty lines dropped, every remaining line
// terminated by exactly one LF. An all-blank body normalizes to nothing.
func normalizeBody(body []byte) []byte {
	out := make([]byte, 0, len(body)+1)
	pendingEmpty := 0 // empty lines seen since the last non-empty one
	started := false
	for off := 0; off < len(body); {
		var line []byte
		line, off = nextLine(body, off)
		line = trimEnd(line)
		if len(line) == 0 {
			if started {
				pendingEmpty++
			}
			continue
		}
		for ; pendingEmpty > 0; pendingEmpty-- {
			out = append(out, '\n')
		}
		out = append(out, line...)
		out = append(out, '\n')
		started = true
	}
	return out
}
