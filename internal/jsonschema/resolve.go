package jsonschema

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// errRemoteRef is wrapped by the error of [Resolve] for a reference outside the document.
var errRemoteRef = errors.New("reference outside the schema document")

// Resolved is a schema with every reference bound, ready to validate values. It is read-only
// and safe for concurrent use.
type Resolved struct {
	root *Schema
	refs map[*Schema]*Schema
	// kinds caches IsTrue (+1) and IsFalse (-1) for every subschema: both are reflection.
	kinds map[*Schema]int8
	// annotations is set when some subschema has unevaluatedProperties or unevaluatedItems,
	// the only keywords that need to know what was evaluated.
	annotations bool
	// patterns holds every compiled pattern by its text; a pattern Go cannot compile maps to nil.
	patterns map[string]*regexp.Regexp
	skipped  []string
}

// Root returns the schema that was resolved.
func (r *Resolved) Root() *Schema { return r.root }

// IsTrue is [IsTrue] for a subschema of r's document, from a cache built by [Resolve].
func (r *Resolved) IsTrue(s *Schema) bool {
	if k, ok := r.kinds[s]; ok {
		return k == 1
	}
	return IsTrue(s)
}

// IsFalse is [IsFalse] for a subschema of r's document, from a cache built by [Resolve].
func (r *Resolved) IsFalse(s *Schema) bool {
	if k, ok := r.kinds[s]; ok {
		return k == -1
	}
	return IsFalse(s)
}

// Skipped lists, sorted, the patterns that Go cannot compile and that are therefore not checked.
func (r *Resolved) Skipped() []string { return r.skipped }

// defaultBase is the base URI of a document without an absolute $id.
const defaultBase = "https://schema.rein.invalid/root.json"

type resource struct {
	pointers map[string]*Schema
	anchors  map[string]*Schema
}

type pendingRef struct {
	s    *Schema
	ref  string
	base *url.URL
}

type resolver struct {
	r         *Resolved
	resources map[string]*resource
	pending   []pendingRef
	seen      map[*Schema]bool
}

// Resolve binds every $ref of s to the subschema it names and compiles its patterns. A
// reference that names no subschema of the document is an error.
func Resolve(s *Schema) (*Resolved, error) {
	if s == nil {
		s = True()
	}
	base, _ := url.Parse(defaultBase)
	rv := &resolver{
		r:         &Resolved{root: s, refs: map[*Schema]*Schema{}, kinds: map[*Schema]int8{}, patterns: map[string]*regexp.Regexp{}},
		resources: map[string]*resource{},
		seen:      map[*Schema]bool{},
	}
	if err := rv.index(s, base, nil, ""); err != nil {
		return nil, err
	}
	for len(rv.pending) > 0 {
		p := rv.pending[0]
		rv.pending = rv.pending[1:]
		target, err := rv.lookup(p.ref, p.base)
		if err != nil {
			return nil, err
		}
		rv.r.refs[p.s] = target
	}
	for pat, re := range rv.r.patterns {
		if re == nil {
			rv.r.skipped = append(rv.r.skipped, pat)
		}
	}
	sort.Strings(rv.r.skipped)
	return rv.r, nil
}

// index records s (at pointer ptr of resource res, whose base is base) and everything below it.
func (rv *resolver) index(s *Schema, base *url.URL, res *resource, ptr string) error {
	if s == nil {
		return nil
	}
	if s.ID != "" && !strings.HasPrefix(s.ID, "#") {
		u, err := url.Parse(s.ID)
		if err != nil {
			return fmt.Errorf("schema at #%s: $id %q: %w", ptr, s.ID, err)
		}
		base = base.ResolveReference(u)
		base.Fragment, base.RawFragment = "", ""
		if res != nil {
			res.pointers[ptr] = s
		}
		res, ptr = rv.resource(base.String()), ""
	} else if res == nil {
		res = rv.resource(base.String())
	}
	res.pointers[ptr] = s
	if rv.seen[s] {
		return nil
	}
	rv.seen[s] = true
	switch {
	case IsTrue(s):
		rv.r.kinds[s] = 1
	case IsFalse(s):
		rv.r.kinds[s] = -1
	default:
		rv.r.kinds[s] = 0
	}
	if s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil {
		rv.r.annotations = true
	}
	idAnchor, _ := strings.CutPrefix(s.ID, "#") // draft-07 spells an anchor as an $id "#name"
	if idAnchor == s.ID {
		idAnchor = ""
	}
	for _, a := range []string{s.Anchor, s.DynamicAnchor, idAnchor} {
		if a != "" {
			res.anchors[a] = s
		}
	}
	for _, ref := range []string{s.Ref, s.DynamicRef} {
		if ref != "" {
			rv.pending = append(rv.pending, pendingRef{s: s, ref: ref, base: base})
		}
	}
	rv.pattern(s.Pattern)
	for p := range s.PatternProperties {
		rv.pattern(p)
	}
	var err error
	eachSub(s, func(sub *Schema, path string) {
		if err == nil {
			err = rv.index(sub, base, res, ptr+path)
		}
	})
	return err
}

func (rv *resolver) resource(key string) *resource {
	res := rv.resources[key]
	if res == nil {
		res = &resource{pointers: map[string]*Schema{}, anchors: map[string]*Schema{}}
		rv.resources[key] = res
	}
	return res
}

func (rv *resolver) pattern(p string) {
	if p == "" {
		return
	}
	if _, done := rv.r.patterns[p]; done {
		return
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	rv.r.patterns[p] = re
}

// lookup finds the subschema ref (relative to base) names.
func (rv *resolver) lookup(ref string, base *url.URL) (*Schema, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %w", ref, err)
	}
	abs := base.ResolveReference(u)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	res := rv.resources[abs.String()]
	if res == nil {
		return nil, fmt.Errorf("$ref %q: %w (only references within the document are followed)", ref, errRemoteRef)
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		if s, ok := res.pointers[frag]; ok {
			return s, nil
		}
		s, err := rv.intoExtra(res, frag, base)
		if err != nil {
			return nil, fmt.Errorf("$ref %q: %w", ref, err)
		}
		return s, nil
	}
	if s, ok := res.anchors[frag]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("$ref %q: no $anchor %q in the document", ref, frag)
}

// intoExtra follows pointer ptr through a keyword this package does not know (an OpenAPI-style
// "#/components/schemas/x"): it finds the nearest schema above, walks its Extra value and
// parses what it finds as a schema, indexed like any other.
func (rv *resolver) intoExtra(res *resource, ptr string, base *url.URL) (*Schema, error) {
	segs := strings.Split(ptr, "/")[1:]
	for n := len(segs) - 1; n >= 0; n-- {
		prefix := ""
		if n > 0 {
			prefix = "/" + strings.Join(segs[:n], "/")
		}
		owner, ok := res.pointers[prefix]
		if !ok {
			continue
		}
		var v any = owner.Extra
		for _, seg := range segs[n:] {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			switch c := v.(type) {
			case map[string]any:
				v, ok = c[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				ok = err == nil && i >= 0 && i < len(c)
				if ok {
					v = c[i]
				}
			default:
				ok = false
			}
			if !ok {
				return nil, fmt.Errorf("the pointer %q names nothing in the document", ptr)
			}
		}
		s, err := fromValue(v, "#"+ptr)
		if err != nil {
			return nil, err
		}
		if err := rv.index(s, base, res, ptr); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("the pointer %q names nothing in the document", ptr)
}

// eachSub calls f with every direct subschema of s and its JSON pointer below s.
func eachSub(s *Schema, f func(sub *Schema, path string)) {
	one := func(k string, sub *Schema) {
		if sub != nil {
			f(sub, "/"+k)
		}
	}
	list := func(k string, l []*Schema) {
		for i, sub := range l {
			f(sub, "/"+k+"/"+strconv.Itoa(i))
		}
	}
	each := func(k string, m map[string]*Schema) {
		for name, sub := range m {
			f(sub, "/"+k+"/"+escapePointer(name))
		}
	}
	each("$defs", s.Defs)
	each("definitions", s.Definitions)
	each("properties", s.Properties)
	each("patternProperties", s.PatternProperties)
	each("dependentSchemas", s.DependentSchemas)
	each("dependencies", s.DependencySchemas)
	one("items", s.Items)
	list("items", s.ItemsArray)
	list("prefixItems", s.PrefixItems)
	one("additionalItems", s.AdditionalItems)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	one("additionalProperties", s.AdditionalProperties)
	one("propertyNames", s.PropertyNames)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
}
