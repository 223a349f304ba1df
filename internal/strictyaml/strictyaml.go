package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Problem is one problem of a file, at a line (0 when unknown).
type Problem struct {
	File  string
	Line  int
	Field string // the dotted path of the field, or ""
	Msg   string
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Field == "" {
		return loc + ": " + p.Msg
	}
	return loc + ": " + p.Field + ": " + p.Msg
}

// Error lists every problem of a file that cannot be used.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return strings.Join(parts, "\n")
}

// Decode parses data (the bytes of file) under the rules of the package doc into v and
// returns the document node.
func Decode(data []byte, file string, v any) (*yaml.Node, error) {
	doc, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, &Error{DecodeProblems(file, err)}
	}
	return doc, nil
}

// Parse parses data as one YAML document without expanding anything, refusing anchors,
// aliases, merge keys and duplicate keys.
func Parse(data []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{[]Problem{{File: file, Msg: "the file is empty"}}}
		}
		return nil, &Error{DecodeProblems(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{[]Problem{{File: file, Line: extra.Line, Msg: "a second YAML document: the file must hold exactly one"}}}
	} else if !errors.Is(err, io.EOF) {
		return nil, &Error{DecodeProblems(file, err)}
	}
	var probs []Problem
	walk(&doc, file, &probs)
	if len(probs) > 0 {
		return nil, &Error{probs}
	}
	return &doc, nil
}

// walk records every anchor, alias, merge key and duplicate key below n.
func walk(n *yaml.Node, file string, probs *[]Problem) {
	if n.Anchor != "" {
		*probs = append(*probs, Problem{File: file, Line: n.Line, Msg: fmt.Sprintf("anchor &%s: anchors and aliases are not allowed", n.Anchor)})
	}
	if n.Kind == yaml.AliasNode {
		*probs = append(*probs, Problem{File: file, Line: n.Line, Msg: fmt.Sprintf("alias *%s: anchors and aliases are not allowed", n.Value)})
		return
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Tag == "!!merge" || k.Value == "<<" && k.Style == 0 {
				*probs = append(*probs, Problem{File: file, Line: k.Line, Msg: "merge key <<: not allowed"})
			}
			if first, dup := seen[k.Value]; dup {
				*probs = append(*probs, Problem{File: file, Line: k.Line, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, first)})
			} else {
				seen[k.Value] = k.Line
			}
		}
	}
	for _, c := range n.Content {
		walk(c, file, probs)
	}
}

// DecodeProblems turns a yaml decoding error (every type error of it) into problems of file,
// each at its line when the error names one.
func DecodeProblems(file string, err error) []Problem {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		out := make([]Problem, 0, len(te.Errors))
		for _, ue := range te.Errors {
			out = append(out, Problem{File: file, Line: ue.Line, Msg: ue.Err.Error()})
		}
		return out
	}
	var pe *yaml.ParserError
	if errors.As(err, &pe) {
		return []Problem{{File: file, Line: pe.Line, Msg: pe.Message}}
	}
	return []Problem{{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
}

// Line returns the line of the node at the path of mapping keys (strings) and sequence
// indexes (ints) below doc, or of the deepest node found on the way.
func Line(doc *yaml.Node, keys ...any) int {
	_, line := NodeAt(doc, keys...)
	return line
}

// NodeAt returns the node at the path of mapping keys (strings) and sequence indexes (ints)
// below doc (nil when there is none) and the line of the deepest node found on the way.
func NodeAt(doc *yaml.Node, keys ...any) (*yaml.Node, int) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, k := range keys {
		var next *yaml.Node
		switch k := k.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						next, line = n.Content[i+1], n.Content[i].Line
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k >= 0 && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		if next == nil {
			return nil, line
		}
		n = next
	}
	return n, line
}
