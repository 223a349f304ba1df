package tool

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownTool is wrapped by the error [Set.Select] returns for a name the set lacks.
var ErrUnknownTool = errors.New("unknown tool")

// Set is an ordered set of tools with unique, non-empty names. It is immutable after [New]
// and safe for concurrent use.
type Set struct {
	tools  []Tool
	specs  []Spec
	byName map[string]int
}

// New returns a set holding tools in the given order. It rejects a nil tool, an empty name,
// and two tools with the same name.
func New(tools ...Tool) (*Set, error) {
	s := &Set{byName: make(map[string]int, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("tool set: tool %d is nil", i)
		}
		spec := t.Spec()
		if strings.TrimSpace(spec.Name) == "" {
			return nil, fmt.Errorf("tool set: tool %d (%T) has an empty name", i, t)
		}
		if _, dup := s.byName[spec.Name]; dup {
			return nil, fmt.Errorf("tool set: duplicate tool name %q", spec.Name)
		}
		s.byName[spec.Name] = len(s.tools)
		s.tools = append(s.tools, t)
		s.specs = append(s.specs, spec)
	}
	return s, nil
}

// Len returns the number of tools.
func (s *Set) Len() int { return len(s.tools) }

// Get returns the tool with the given name.
func (s *Set) Get(name string) (Tool, bool) {
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return s.tools[i], true
}

// Spec returns the spec of the named tool, as captured by [New].
func (s *Set) Spec(name string) (Spec, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Spec{}, false
	}
	return s.specs[i], true
}

// Tools returns the tools in order. The slice is a copy.
func (s *Set) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// Specs returns the tools' specs in order. The slice is a copy.
func (s *Set) Specs() []Spec { return append([]Spec(nil), s.specs...) }

// Names returns the tool names in order.
func (s *Set) Names() []string {
	names := make([]string, len(s.specs))
	for i, sp := range s.specs {
		names[i] = sp.Name
	}
	return names
}

// Select returns the subset named by names, in the order given; a repeated name is kept once.
// Any name the set lacks makes it fail with an error wrapping [ErrUnknownTool] that names
// every unknown tool and lists the known ones.
func (s *Set) Select(names []string) (*Set, error) {
	var picked []int
	var unknown []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		i, ok := s.byName[n]
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%q", n))
			continue
		}
		picked = append(picked, i)
	}
	if len(unknown) > 0 {
		known := strings.Join(s.Names(), ", ")
		if known == "" {
			known = "none"
		}
		return nil, fmt.Errorf("%w: %s (known tools: %s)", ErrUnknownTool, strings.Join(unknown, ", "), known)
	}
	sub := &Set{byName: make(map[string]int, len(picked))}
	for _, i := range picked {
		sub.byName[s.specs[i].Name] = len(sub.tools)
		sub.tools = append(sub.tools, s.tools[i])
		sub.specs = append(sub.specs, s.specs[i])
	}
	return sub, nil
}
