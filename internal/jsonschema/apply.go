package jsonschema

import (
	"slices"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/strictjson"
)

// combinators applies allOf, anyOf, oneOf, not and if/then/else, merging into a what the
// passing subschemas evaluated.
func (c *checker) combinators(s *Schema, v any, path string, depth int, a *seen) {
	for _, sub := range s.AllOf {
		a.merge(c.check(sub, v, path, depth+1))
	}
	if len(s.AnyOf) > 0 {
		var first *Problem
		matched := false
		for _, sub := range s.AnyOf {
			ok, got, p := c.try(sub, v, path, depth+1)
			if ok {
				matched = true
				a.merge(got)
			} else if first == nil {
				first = p
			}
		}
		if !matched {
			c.add(path, "anyOf", "matches none of the %d alternatives (the first: %s)", len(s.AnyOf), summary(first))
		}
	}
	if len(s.OneOf) > 0 {
		var passed []int
		var first *Problem
		for i, sub := range s.OneOf {
			ok, got, p := c.try(sub, v, path, depth+1)
			if ok {
				passed = append(passed, i)
				a.merge(got)
			} else if first == nil {
				first = p
			}
		}
		switch len(passed) {
		case 1:
		case 0:
			c.add(path, "oneOf", "matches none of the %d alternatives (the first: %s)", len(s.OneOf), summary(first))
		default:
			c.add(path, "oneOf", "matches alternatives %v, but must match exactly one", passed)
		}
	}
	if s.Not != nil {
		if ok, _, _ := c.try(s.Not, v, path, depth+1); ok {
			c.add(path, "not", "must not match the schema under \"not\"")
		}
	}
	if s.If != nil {
		ok, got, _ := c.try(s.If, v, path, depth+1)
		if ok {
			a.merge(got)
			if s.Then != nil {
				a.merge(c.check(s.Then, v, path, depth+1))
			}
		} else if s.Else != nil {
			a.merge(c.check(s.Else, v, path, depth+1))
		}
	}
}

// sub checks v against the subschema s of keyword kw; a false subschema's problem names kw.
func (c *checker) sub(kw string, s *Schema, v any, path string, depth int) {
	if c.kind(s) == -1 {
		c.add(path, kw, "no value is allowed here")
		return
	}
	c.check(s, v, path, depth)
}

func summary(p *Problem) string {
	if p == nil {
		return "no detail"
	}
	return p.String()
}

func itemPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (c *checker) checkArray(s *Schema, v []any, path string, depth int, a *seen) {
	if s.MinItems != nil && len(v) < *s.MinItems {
		c.add(path, "minItems", "must have at least %d items; got %d", *s.MinItems, len(v))
	}
	if s.MaxItems != nil && len(v) > *s.MaxItems {
		c.add(path, "maxItems", "must have at most %d items; got %d", *s.MaxItems, len(v))
	}
	if s.UniqueItems {
		first := make(map[string]int, len(v))
		var key []byte
		for i, e := range v {
			key = appendKey(key[:0], e)
			if j, dup := first[string(key)]; dup {
				c.add(path, "uniqueItems", "items %d and %d are equal; items must be unique", j, i)
				break
			}
			first[string(key)] = i
		}
	}
	prefix, rest, prefixKw, restKw := s.PrefixItems, s.Items, "prefixItems", "items"
	if s.ItemsArray != nil {
		prefix, rest, prefixKw, restKw = s.ItemsArray, s.AdditionalItems, "items", "additionalItems"
	}
	for i, item := range v {
		switch {
		case i < len(prefix):
			c.sub(prefixKw, prefix[i], item, itemPath(path, i), depth+1)
			a.items = max(a.items, i+1)
		case rest != nil:
			c.sub(restKw, rest, item, itemPath(path, i), depth+1)
			a.allItems = true
		}
	}
	if s.Contains != nil {
		matched := 0
		for i, item := range v {
			if ok, _, _ := c.try(s.Contains, item, itemPath(path, i), depth+1); ok {
				matched++
				if a.idx == nil {
					a.idx = map[int]bool{}
				}
				a.idx[i] = true
			}
		}
		lo := 1
		if s.MinContains != nil {
			lo = *s.MinContains
		}
		if matched < lo {
			c.add(path, "contains", "must contain at least %d items matching \"contains\"; found %d", lo, matched)
		}
		if s.MaxContains != nil && matched > *s.MaxContains {
			c.add(path, "maxContains", "must contain at most %d items matching \"contains\"; found %d", *s.MaxContains, matched)
		}
	}
	if s.UnevaluatedItems != nil && !a.allItems {
		for i := a.items; i < len(v); i++ {
			if !a.idx[i] {
				c.sub("unevaluatedItems", s.UnevaluatedItems, v[i], itemPath(path, i), depth+1)
			}
		}
		a.allItems = true
	}
}

func (c *checker) checkObject(s *Schema, obj map[string]any, path string, depth int, a *seen) {
	if s.MinProperties != nil && len(obj) < *s.MinProperties {
		c.add(path, "minProperties", "must have at least %d properties; got %d", *s.MinProperties, len(obj))
	}
	if s.MaxProperties != nil && len(obj) > *s.MaxProperties {
		c.add(path, "maxProperties", "must have at most %d properties; got %d", *s.MaxProperties, len(obj))
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			c.add(strictjson.KeyPath(path, name), "required", "missing required property")
		}
	}
	c.dependencies(s, obj, path, depth, a)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kp := strictjson.KeyPath(path, k)
		if s.PropertyNames != nil {
			if ok, _, p := c.try(s.PropertyNames, k, path, depth+1); !ok {
				c.add(kp, "propertyNames", "the property name is refused: %s", strings.TrimPrefix(summary(p), strictjson.ShowPath(path)+": "))
			}
		}
		matched := false
		if ps, ok := s.Properties[k]; ok {
			matched = true
			c.sub("properties", ps, obj[k], kp, depth+1)
		}
		for pat, ps := range s.PatternProperties {
			re := c.r.patterns[pat]
			if re == nil {
				matched = true // a pattern Go cannot compile: see the package contract
				continue
			}
			if re.MatchString(k) {
				matched = true
				c.sub("patternProperties", ps, obj[k], kp, depth+1)
			}
		}
		if matched {
			if c.track {
				a.prop(k)
			}
			continue
		}
		if s.AdditionalProperties != nil {
			if c.kind(s.AdditionalProperties) == -1 {
				c.add(kp, "additionalProperties", "unknown property")
			} else {
				c.check(s.AdditionalProperties, obj[k], kp, depth+1)
			}
			if c.track {
				a.prop(k)
			}
		}
	}
	if s.UnevaluatedProperties != nil && !a.allProps {
		for _, k := range keys {
			if a.props[k] {
				continue
			}
			kp := strictjson.KeyPath(path, k)
			if c.kind(s.UnevaluatedProperties) == -1 {
				c.add(kp, "unevaluatedProperties", "unknown property (no subschema evaluates it)")
			} else {
				c.check(s.UnevaluatedProperties, obj[k], kp, depth+1)
			}
		}
		a.allProps = true
	}
}

func (c *checker) dependencies(s *Schema, obj map[string]any, path string, depth int, a *seen) {
	for _, m := range []map[string][]string{s.DependentRequired, s.DependencyStrings} {
		for name, needs := range m {
			if _, ok := obj[name]; !ok {
				continue
			}
			for _, need := range needs {
				if _, ok := obj[need]; !ok {
					c.add(strictjson.KeyPath(path, need), "dependentRequired", "missing property, required when %q is present", name)
				}
			}
		}
	}
	for _, m := range []map[string]*Schema{s.DependentSchemas, s.DependencySchemas} {
		for name, sub := range m {
			if _, ok := obj[name]; ok {
				a.merge(c.check(sub, obj, path, depth+1))
			}
		}
	}
}
