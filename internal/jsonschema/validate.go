package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/strictjson"
)

// MaxDepth bounds how deeply schemas may nest (through references) while validating one value.
const MaxDepth = 512

// MaxSteps bounds the subschema applications of one validation: a schema whose anyOf or allOf
// branches multiply through references (2 branches, 40 levels) would otherwise take forever.
const MaxSteps = 1 << 20

// Problem is one reason a value was refused.
type Problem struct {
	// Path is the instance path as package strictjson writes it ("" for the value itself).
	Path    string
	Keyword string
	Message string
}

func (p Problem) String() string {
	return strictjson.ShowPath(p.Path) + ": " + p.Message + " (" + p.Keyword + ")"
}

// Error is a refusal by [Resolved.Validate]: every problem found.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	l := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		l[i] = p.String()
	}
	return strings.Join(l, "; ")
}

// Validate checks v, a decoded JSON value (objects map[string]any, arrays []any, numbers
// json.Number or float64), against the schema. A refusal is an *[Error].
func (r *Resolved) Validate(v any) error {
	c := checker{r: r, track: r.annotations}
	c.check(r.root, v, "", 0)
	if c.exhausted != nil {
		return &Error{Problems: []Problem{*c.exhausted}}
	}
	if len(c.problems) > 0 {
		return &Error{Problems: c.problems}
	}
	return nil
}

type checker struct {
	r        *Resolved
	track    bool // record evaluated properties and items (for unevaluated*)
	problems []Problem
	steps    int
	// exhausted is set once MaxSteps is passed: the value is then refused with this problem.
	exhausted *Problem
	// active holds the references being followed, each with the instance path it is
	// applied at: meeting one again at the same path is a cycle that makes no progress.
	active map[activeRef]bool
}

type activeRef struct {
	s    *Schema
	path string
}

// kind is +1 for the schema true, -1 for false, 0 otherwise.
func (c *checker) kind(s *Schema) int8 {
	if k, ok := c.r.kinds[s]; ok {
		return k
	}
	switch {
	case IsTrue(s):
		return 1
	case IsFalse(s):
		return -1
	}
	return 0
}

// seen is what a schema evaluated of an object or array, for the unevaluated* keywords.
type seen struct {
	props    map[string]bool
	allProps bool
	items    int // the first items evaluated
	allItems bool
	idx      map[int]bool // items evaluated by contains
}

func (a *seen) merge(b *seen) {
	if b == nil {
		return
	}
	for k := range b.props {
		a.prop(k)
	}
	a.allProps = a.allProps || b.allProps
	a.items = max(a.items, b.items)
	a.allItems = a.allItems || b.allItems
	for i := range b.idx {
		if a.idx == nil {
			a.idx = map[int]bool{}
		}
		a.idx[i] = true
	}
}

func (a *seen) prop(k string) {
	if a.props == nil {
		a.props = map[string]bool{}
	}
	a.props[k] = true
}

// maxProblems caps the problems kept: a refusal lists enough to correct the value.
const maxProblems = 100

func (c *checker) add(path, keyword, format string, args ...any) {
	if len(c.problems) >= maxProblems {
		// Still one more than the caller saw, so that the value counts as refused.
		if len(c.problems) == maxProblems {
			c.problems = append(c.problems, Problem{Path: path, Keyword: keyword, Message: "... more problems not listed"})
		}
		return
	}
	c.problems = append(c.problems, Problem{Path: path, Keyword: keyword, Message: fmt.Sprintf(format, args...)})
}

// try checks v against s without reporting: it says whether v is valid, what s evaluated and
// the first problem found.
func (c *checker) try(s *Schema, v any, path string, depth int) (bool, *seen, *Problem) {
	n := len(c.problems)
	a := c.check(s, v, path, depth)
	var first *Problem
	if len(c.problems) > n {
		p := c.problems[n]
		first = &p
	}
	c.problems = c.problems[:n]
	return first == nil && c.exhausted == nil, a, first
}

// check reports every problem of v against s and returns what s evaluated (nil when v failed).
func (c *checker) check(s *Schema, v any, path string, depth int) *seen {
	k := int8(1)
	if s != nil {
		k = c.kind(s)
	}
	if k == 1 {
		return &seen{allProps: true, allItems: true}
	}
	if depth > MaxDepth {
		c.add(path, "$ref", "the schema nests deeper than %d levels here (a reference cycle?)", MaxDepth)
		return nil
	}
	if c.steps++; c.steps > MaxSteps {
		if c.exhausted == nil {
			c.exhausted = &Problem{Path: path, Keyword: "schema",
				Message: fmt.Sprintf("validation stopped after %d subschema applications; the schema is too costly to check", MaxSteps)}
		}
		return nil
	}
	if k == -1 {
		c.add(path, "false", "no value is allowed here")
		return nil
	}
	n := len(c.problems)
	a := &seen{}
	if s.Ref != "" || s.DynamicRef != "" {
		c.followRef(s, v, path, depth, a)
	}
	c.checkType(s, v, path)
	c.checkValue(s, v, path)
	c.combinators(s, v, path, depth, a)
	switch v := v.(type) {
	case []any:
		c.checkArray(s, v, path, depth, a)
	case map[string]any:
		c.checkObject(s, v, path, depth, a)
	}
	if len(c.problems) > n {
		return nil
	}
	return a
}

func (c *checker) followRef(s *Schema, v any, path string, depth int, a *seen) {
	t := c.r.refs[s]
	if t == nil {
		return
	}
	key := activeRef{t, path}
	if c.active[key] {
		ref := s.Ref
		if ref == "" {
			ref = s.DynamicRef
		}
		c.add(path, "$ref", "the reference %q leads back to itself without reaching a smaller value", ref)
		return
	}
	if c.active == nil {
		c.active = map[activeRef]bool{}
	}
	c.active[key] = true
	a.merge(c.check(t, v, path, depth+1))
	delete(c.active, key)
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, int, int64:
		if isInteger(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (c *checker) checkType(s *Schema, v any, path string) {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return
	}
	got := jsonType(v)
	if slices.Contains(types, got) || got == "integer" && slices.Contains(types, "number") {
		return
	}
	c.add(path, "type", "expected %s, got %s", strings.Join(types, " or "), got)
}

func (c *checker) checkValue(s *Schema, v any, path string) {
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return Equal(v, e) }) {
		b, _ := json.Marshal(s.Enum)
		c.add(path, "enum", "must be one of %s", b)
	}
	if s.Const != nil && !Equal(v, *s.Const) {
		b, _ := json.Marshal(*s.Const)
		c.add(path, "const", "must be %s", b)
	}
	switch v := v.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength {
			c.add(path, "minLength", "must be at least %d characters long; got %d", *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			c.add(path, "maxLength", "must be at most %d characters long; got %d", *s.MaxLength, n)
		}
		if re := c.r.patterns[s.Pattern]; s.Pattern != "" && re != nil && !re.MatchString(v) {
			c.add(path, "pattern", "must match the pattern %q", s.Pattern)
		}
	case json.Number, float64, int, int64:
		c.checkNumber(s, v, path)
	}
}

func (c *checker) checkNumber(s *Schema, v any, path string) {
	f := toFloat(v)
	show := numberText(v)
	if s.Minimum != nil && f < *s.Minimum {
		c.add(path, "minimum", "must be >= %v; got %s", *s.Minimum, show)
	}
	if s.Maximum != nil && f > *s.Maximum {
		c.add(path, "maximum", "must be <= %v; got %s", *s.Maximum, show)
	}
	if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
		c.add(path, "exclusiveMinimum", "must be > %v; got %s", *s.ExclusiveMinimum, show)
	}
	if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
		c.add(path, "exclusiveMaximum", "must be < %v; got %s", *s.ExclusiveMaximum, show)
	}
	if s.MultipleOf != nil {
		x, okx := exactNumber(show)
		m, okm := exactNumber(strconv.FormatFloat(*s.MultipleOf, 'g', -1, 64))
		if okx && okm && !new(big.Rat).Quo(x, m).IsInt() {
			c.add(path, "multipleOf", "must be a multiple of %v; got %s", *s.MultipleOf, show)
		}
	}
}

func numberText(v any) string {
	switch v := v.(type) {
	case json.Number:
		return string(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return math.Inf(1) // out of range: larger than any bound
		}
		return f
	case float64:
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	}
	return math.NaN()
}

func isInteger(v any) bool {
	switch v := v.(type) {
	case int, int64:
		return true
	case float64:
		return v == math.Trunc(v) && !math.IsInf(v, 0)
	case json.Number:
		if !strings.ContainsAny(string(v), ".eE") {
			return true
		}
		// The canonical spelling's exponent says it: the significant digits times a power
		// of ten that is not negative. An exponent too large for an int: its sign does.
		key := canonNumber(string(v))
		if rest, ok := strings.CutPrefix(key, "x"); ok {
			mant, exp, _ := strings.Cut(strings.ToLower(rest), "e")
			return !strings.HasPrefix(exp, "-") || strings.Trim(mant, "-+0.") == ""
		}
		_, exp, _ := strings.Cut(key, "e")
		return !strings.HasPrefix(exp, "-")
	}
	return false
}

// Equal reports whether a and b are the same JSON value (numbers compared by value, exactly:
// 1 == 1.0 == 10e-1).
func Equal(a, b any) bool {
	switch a := a.(type) {
	case json.Number, float64, int, int64:
		switch b.(type) {
		case json.Number, float64, int, int64:
			// Different floats are different numbers; equal ones are compared exactly, for
			// numbers beyond float64's precision.
			if toFloat(a) != toFloat(b) {
				return false
			}
			return canonNumber(numberText(a)) == canonNumber(numberText(b))
		}
		return false
	case []any:
		l, ok := b.([]any)
		return ok && len(a) == len(l) && !slices.ContainsFunc(indices(a), func(i int) bool { return !Equal(a[i], l[i]) })
	case map[string]any:
		m, ok := b.(map[string]any)
		if !ok || len(a) != len(m) {
			return false
		}
		for k, x := range a {
			y, ok := m[k]
			if !ok || !Equal(x, y) {
				return false
			}
		}
		return true
	}
	return a == b
}

// canonNumber is the one spelling of the value of a JSON number's text: its significant
// digits without leading or trailing zeros, then "e" and the exponent ("-25e-1" for -2.50,
// "0" for any zero), so that two numbers are equal exactly when their spellings are. Linear in
// the text; an exponent too large for an int keeps the text itself.
func canonNumber(text string) string {
	t := strings.ToLower(text)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimLeft(t, "+-")
	mant, exps, hasExp := strings.Cut(t, "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(exps)
		if err != nil {
			return "x" + text
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed) - len(frac)
	if neg {
		return "-" + trimmed + "e" + strconv.Itoa(exp)
	}
	return trimmed + "e" + strconv.Itoa(exp)
}

// appendKey appends to b a text that is the same for two values exactly when [Equal] says
// they are: uniqueItems compares every item with every other through it, in one pass.
func appendKey(b []byte, v any) []byte {
	switch v := v.(type) {
	case json.Number, float64, int, int64:
		return append(append(b, 'n'), canonNumber(numberText(v))...)
	case string:
		return strconv.AppendQuote(append(b, 's'), v)
	case bool:
		return strconv.AppendBool(append(b, 'b'), v)
	case nil:
		return append(b, 'z')
	case []any:
		b = append(b, '[')
		for _, e := range v {
			b = append(appendKey(b, e), ',')
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = append(appendKey(strconv.AppendQuote(b, k), v[k]), ',')
		}
		return append(b, '}')
	}
	return fmt.Appendf(append(b, '?'), "%T %v", v, v)
}

// maxExponent bounds the decimal exponent of a number compared exactly: an instance is
// untrusted, and 1e999999999 as a big.Rat would take gigabytes.
const maxExponent = 400

// exactNumber returns the JSON number text as an exact rational, or false when it is not a
// number or its exponent is beyond maxExponent (callers then compare as float64).
func exactNumber(text string) (*big.Rat, bool) {
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return nil, false
		}
	}
	if len(text) > 2*maxExponent {
		return nil, false
	}
	return new(big.Rat).SetString(text)
}

func indices(l []any) []int {
	out := make([]int, len(l))
	for i := range out {
		out[i] = i
	}
	return out
}
