package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/llm"
)

// FormatVersion is the only scenario format version this package reads.
const FormatVersion = 1

// DefaultName is the model name of a scenario that names none.
const DefaultName = "script"

// ParseError reports a problem with a scenario file: where it is and what is wrong.
type ParseError struct {
	File   string // the name given to Parse or the path given to Load
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Field  string // path of the offending field, such as "dialogs[0].turns[1].stop"; "" for the file
	Msg    string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(cmpOr(e.File, "scenario"))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Load reads and parses the scenario file at path. See [Parse].
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return Parse(data, path)
}

// Parse parses a scenario. name is the file name used in error messages and to choose the
// format: a ".json" name is read as JSON, a ".yaml" or ".yml" name as YAML, and any other name
// as JSON when data is valid JSON and as YAML otherwise. Every problem is a [*ParseError].
func Parse(data []byte, name string) (*Model, error) {
	p := &parser{file: name}
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	sc, err := p.scenario(root)
	if err != nil {
		return nil, err
	}
	sc.source = name
	return &Model{name: sc.model, pricing: sc.pricing, sc: sc}, nil
}

// scenario is a parsed file. It is immutable once parsed.
type scenario struct {
	source  string
	model   string
	pricing llm.Pricing
	dialogs []*dialog
}

type dialog struct {
	index int
	line  int
	field string
	match *regexp.Regexp // nil: any user message
	turns []*turn
}

type turn struct {
	line     int
	thinking *string
	text     *string
	calls    []call
	stop     llm.StopReason
	usage    llm.Usage
	delay    time.Duration
	fail     *failure
	times    int // with fail: fail only the first times attempts; 0: always
}

type call struct {
	id   string // "" for the default id
	name string
	args string
}

type failure struct {
	kind       llm.ErrorKind
	status     int
	message    string
	retryAfter time.Duration
	partial    string
}

// errorKinds lists the kinds a scenario may script, with the HTTP status a provider would
// send and whether the kind is retryable.
// (A list the compiler lays out; a map literal would be built at every start.)
var errorKinds = [...]errorKindDef{
	{llm.KindRateLimit, 429, true},
	{llm.KindOverloaded, 529, true},
	{llm.KindServer, 500, true},
	{llm.KindNetwork, 0, true},
	{llm.KindTimeout, 0, true},
	{llm.KindIncompleteStream, 0, true},
	{llm.KindAuth, 401, false},
	{llm.KindInvalid, 400, false},
	{llm.KindSpendLimit, 0, false},
	{llm.KindContext, 400, false},
	{llm.KindProtocol, 0, false},
	{llm.KindUnavailable, 0, false},
}

type errorKindDef struct {
	kind      llm.ErrorKind
	status    int
	retryable bool
}

// errorKind returns the scriptable kind k.
func errorKind(k llm.ErrorKind) (errorKindDef, bool) {
	for _, d := range errorKinds {
		if d.kind == k {
			return d, true
		}
	}
	return errorKindDef{}, false
}

// retryableKind reports whether the scriptable kind k is retryable.
func retryableKind(k llm.ErrorKind) bool {
	d, _ := errorKind(k)
	return d.retryable
}

func kindNames() string {
	names := make([]string, 0, len(errorKinds))
	for _, d := range errorKinds {
		names = append(names, string(d.kind))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

type parser struct {
	file string
}

func (p *parser) errAt(n *yaml.Node, field, format string, args ...any) error {
	e := &ParseError{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// document parses data into a YAML document node, from YAML or from strict JSON.
func (p *parser) document(data []byte) (*yaml.Node, error) {
	if !utf8.Valid(data) {
		line, col := lineCol(data, invalidUTF8(data))
		return nil, &ParseError{File: p.file, Line: line, Column: col, Msg: "the file is not valid UTF-8"}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ParseError{File: p.file, Msg: "the file is empty"}
	}
	ext := strings.ToLower(filepath.Ext(p.file))
	if ext == ".json" || (ext != ".yaml" && ext != ".yml" && json.Valid(data)) {
		return p.jsonDocument(data)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, p.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, p.yamlError(err)
		}
		return nil, p.errAt(&extra, "", "more than one YAML document: a file holds one scenario")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &ParseError{File: p.file, Msg: "the file holds no YAML document"}
	}
	return doc.Content[0], nil
}

func (p *parser) yamlError(err error) error {
	var pe *yaml.ParserError
	if errors.As(err, &pe) {
		return &ParseError{File: p.file, Line: pe.Line, Msg: "invalid YAML: " + pe.Message}
	}
	return &ParseError{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// lineCol converts a byte offset into a 1-based line and a 1-based column counted in runes.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the integer " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "nothing"
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// object checks that n is a mapping whose keys are all among keys, without duplicates, and
// returns its values by key.
func (p *parser) object(n *yaml.Node, field string, keys ...string) (map[string]*yaml.Node, error) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.errAt(n, field, "want a mapping with the fields %s, got %s", strings.Join(keys, ", "), describe(n))
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			return nil, p.errAt(k, field, "a field name must be a plain string, got %s", describe(k))
		}
		if !slices.Contains(keys, k.Value) {
			return nil, p.errAt(k, join(field, k.Value), "unknown field %q (the fields here are %s)", k.Value, strings.Join(keys, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errAt(k, join(field, k.Value), "duplicate field %q", k.Value)
		}
		out[k.Value] = n.Content[i+1]
	}
	return out, nil
}

func (p *parser) list(n *yaml.Node, field string) ([]*yaml.Node, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, p.errAt(n, field, "want a list, got %s", describe(n))
	}
	return n.Content, nil
}

func (p *parser) str(n *yaml.Node, field string) (string, error) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errAt(n, field, "want a string, got %s (quote it to make it a string)", describe(n))
	}
	return n.Value, nil
}

func (p *parser) integer(n *yaml.Node, field string, lo, hi int) (int, error) {
	n = resolve(n)
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		return 0, p.errAt(n, field, "want an integer, got %s", describe(n))
	}
	if v < lo || v > hi {
		if hi == math.MaxInt {
			return 0, p.errAt(n, field, "want an integer of at least %d, got %d", lo, v)
		}
		return 0, p.errAt(n, field, "want an integer from %d to %d, got %d", lo, hi, v)
	}
	return v, nil
}

func (p *parser) price(n *yaml.Node, field string) (float64, error) {
	n = resolve(n)
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil {
		return 0, p.errAt(n, field, "want a number, got %s", describe(n))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, p.errAt(n, field, "want a finite number of at least 0, got %s", n.Value)
	}
	return v, nil
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.str(n, field)
	if err != nil {
		return 0, p.errAt(resolve(n), field, "want a duration such as \"50ms\" or \"2s\", got %s", describe(resolve(n)))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, p.errAt(resolve(n), field, "want a duration of at least 0 such as \"50ms\" or \"2s\", got %q", s)
	}
	return d, nil
}

func (p *parser) scenario(root *yaml.Node) (*scenario, error) {
	f, err := p.object(root, "", "version", "description", "model", "pricing", "dialogs", "turns")
	if err != nil {
		return nil, err
	}
	root = resolve(root)
	v, ok := f["version"]
	if !ok {
		return nil, p.errAt(root, "version", "missing: a scenario starts with \"version: %d\"", FormatVersion)
	}
	if n, err := p.integer(v, "version", 0, math.MaxInt); err != nil {
		return nil, err
	} else if n != FormatVersion {
		return nil, p.errAt(resolve(v), "version", "version %d is not supported (this rein reads version %d)", n, FormatVersion)
	}
	sc := &scenario{model: DefaultName}
	if n, ok := f["description"]; ok {
		if _, err := p.str(n, "description"); err != nil {
			return nil, err
		}
	}
	if n, ok := f["model"]; ok {
		if sc.model, err = p.str(n, "model"); err != nil {
			return nil, err
		}
		if strings.TrimSpace(sc.model) == "" {
			return nil, p.errAt(resolve(n), "model", "must not be empty")
		}
	}
	if n, ok := f["pricing"]; ok {
		if sc.pricing, err = p.pricing(n, "pricing"); err != nil {
			return nil, err
		}
	}
	dn, hasDialogs := f["dialogs"]
	tn, hasTurns := f["turns"]
	switch {
	case hasDialogs && hasTurns:
		return nil, p.errAt(resolve(tn), "turns", "give either dialogs or turns, not both (turns is short for one dialog without match)")
	case hasTurns:
		d, err := p.turnList(tn, "turns")
		if err != nil {
			return nil, err
		}
		sc.dialogs = []*dialog{{index: 0, line: resolve(tn).Line, field: "turns", turns: d}}
	case hasDialogs:
		items, err := p.list(dn, "dialogs")
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return nil, p.errAt(resolve(dn), "dialogs", "the list is empty: script at least one dialog")
		}
		for i, item := range items {
			d, err := p.dialog(item, fmt.Sprintf("dialogs[%d]", i))
			if err != nil {
				return nil, err
			}
			d.index = i
			sc.dialogs = append(sc.dialogs, d)
		}
	default:
		return nil, p.errAt(root, "", "missing dialogs (or turns): the scenario scripts no answer")
	}
	return sc, nil
}

func (p *parser) pricing(n *yaml.Node, field string) (llm.Pricing, error) {
	f, err := p.object(n, field, "input", "output", "cacheRead", "cacheWrite")
	if err != nil {
		return llm.Pricing{}, err
	}
	var pr llm.Pricing
	for _, x := range []struct {
		key string
		dst *float64
	}{{"input", &pr.Input}, {"output", &pr.Output}, {"cacheRead", &pr.CacheRead}, {"cacheWrite", &pr.CacheWrite}} {
		if v, ok := f[x.key]; ok {
			if *x.dst, err = p.price(v, join(field, x.key)); err != nil {
				return pr, err
			}
		}
	}
	return pr, nil
}

func (p *parser) dialog(n *yaml.Node, field string) (*dialog, error) {
	f, err := p.object(n, field, "match", "turns")
	if err != nil {
		return nil, err
	}
	d := &dialog{line: resolve(n).Line, field: field}
	if m, ok := f["match"]; ok {
		src, err := p.str(m, join(field, "match"))
		if err != nil {
			return nil, err
		}
		if d.match, err = regexp.Compile(src); err != nil {
			return nil, p.errAt(resolve(m), join(field, "match"), "invalid regular expression: %v", err)
		}
	}
	tn, ok := f["turns"]
	if !ok {
		return nil, p.errAt(resolve(n), join(field, "turns"), "missing: a dialog scripts at least one turn")
	}
	if d.turns, err = p.turnList(tn, join(field, "turns")); err != nil {
		return nil, err
	}
	return d, nil
}

func (p *parser) turnList(n *yaml.Node, field string) ([]*turn, error) {
	items, err := p.list(n, field)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, p.errAt(resolve(n), field, "the list is empty: script at least one turn")
	}
	turns := make([]*turn, 0, len(items))
	for i, item := range items {
		t, err := p.turn(item, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	return turns, nil
}

func (p *parser) turn(n *yaml.Node, field string) (*turn, error) {
	f, err := p.object(n, field, "thinking", "text", "calls", "stop", "usage", "delay", "error", "times")
	if err != nil {
		return nil, err
	}
	n = resolve(n)
	t := &turn{line: n.Line}
	for _, x := range []struct {
		key string
		dst **string
	}{{"thinking", &t.thinking}, {"text", &t.text}} {
		if v, ok := f[x.key]; ok {
			s, err := p.str(v, join(field, x.key))
			if err != nil {
				return nil, err
			}
			*x.dst = &s
		}
	}
	if v, ok := f["calls"]; ok {
		items, err := p.list(v, join(field, "calls"))
		if err != nil {
			return nil, err
		}
		ids := map[string]bool{}
		for i, item := range items {
			cf := fmt.Sprintf("%s.calls[%d]", field, i)
			c, err := p.call(item, cf)
			if err != nil {
				return nil, err
			}
			if c.id != "" {
				if ids[c.id] {
					return nil, p.errAt(resolve(item), join(cf, "id"), "duplicate tool-call id %q in this turn", c.id)
				}
				ids[c.id] = true
			}
			t.calls = append(t.calls, c)
		}
	}
	t.stop = llm.StopEnd
	if len(t.calls) > 0 {
		t.stop = llm.StopToolUse
	}
	if v, ok := f["stop"]; ok {
		s, err := p.str(v, join(field, "stop"))
		if err != nil {
			return nil, err
		}
		switch r := llm.StopReason(s); r {
		case llm.StopEnd, llm.StopLength, llm.StopToolUse:
			t.stop = r
		default:
			return nil, p.errAt(resolve(v), join(field, "stop"), "unknown stop reason %q (want stop, length or toolUse; failures are scripted with error)", s)
		}
	}
	if v, ok := f["usage"]; ok {
		if t.usage, err = p.usage(v, join(field, "usage")); err != nil {
			return nil, err
		}
	}
	if v, ok := f["delay"]; ok {
		if t.delay, err = p.duration(v, join(field, "delay")); err != nil {
			return nil, err
		}
	}
	if v, ok := f["error"]; ok {
		if t.fail, err = p.failure(v, join(field, "error")); err != nil {
			return nil, err
		}
	}
	if v, ok := f["times"]; ok {
		if t.fail == nil {
			return nil, p.errAt(resolve(v), join(field, "times"), "times counts failed attempts: it needs error")
		}
		if t.times, err = p.integer(v, join(field, "times"), 1, math.MaxInt); err != nil {
			return nil, err
		}
	}
	_, hasStop := f["stop"]
	_, hasUsage := f["usage"]
	answers := t.thinking != nil || t.text != nil || len(t.calls) > 0
	switch {
	case t.fail != nil && t.times == 0 && (answers || hasStop || hasUsage):
		return nil, p.errAt(n, field, "this error fails every attempt, so thinking, text, calls, stop and usage would never be sent: add times: N to fail only the first N attempts")
	case t.fail != nil && t.times > 0 && !answers:
		return nil, p.errAt(n, field, "after its %d failed attempts this turn has no answer: add text, thinking or calls", t.times)
	case t.fail == nil && !answers:
		return nil, p.errAt(n, field, "a turn needs at least one of text, thinking, calls or error")
	}
	return t, nil
}

func (p *parser) call(n *yaml.Node, field string) (call, error) {
	f, err := p.object(n, field, "name", "id", "args", "raw")
	if err != nil {
		return call{}, err
	}
	var c call
	nn, ok := f["name"]
	if !ok {
		return c, p.errAt(resolve(n), join(field, "name"), "missing: a tool call names its tool")
	}
	if c.name, err = p.str(nn, join(field, "name")); err != nil {
		return c, err
	}
	if c.name == "" {
		return c, p.errAt(resolve(nn), join(field, "name"), "must not be empty")
	}
	if v, ok := f["id"]; ok {
		if c.id, err = p.str(v, join(field, "id")); err != nil {
			return c, err
		}
		if c.id == "" {
			return c, p.errAt(resolve(v), join(field, "id"), "must not be empty (leave it out for the default id)")
		}
	}
	av, hasArgs := f["args"]
	rv, hasRaw := f["raw"]
	switch {
	case hasArgs && hasRaw:
		return c, p.errAt(resolve(rv), join(field, "raw"), "give either args (an object sent as JSON) or raw (the literal argument text), not both")
	case hasRaw:
		if c.args, err = p.str(rv, join(field, "raw")); err != nil {
			return c, err
		}
	case hasArgs:
		a := resolve(av)
		if a.Kind != yaml.MappingNode {
			return c, p.errAt(a, join(field, "args"), "want a mapping (a JSON object), got %s; use raw to send other argument text", describe(a))
		}
		var b bytes.Buffer
		if err := p.toJSON(a, join(field, "args"), &b, 0); err != nil {
			return c, err
		}
		c.args = b.String()
	default:
		c.args = "{}"
	}
	return c, nil
}

func (p *parser) usage(n *yaml.Node, field string) (llm.Usage, error) {
	f, err := p.object(n, field, "input", "output", "cacheRead", "cacheWrite")
	if err != nil {
		return llm.Usage{}, err
	}
	var u llm.Usage
	for _, x := range []struct {
		key string
		dst *int
	}{{"input", &u.Input}, {"output", &u.Output}, {"cacheRead", &u.CacheRead}, {"cacheWrite", &u.CacheWrite}} {
		if v, ok := f[x.key]; ok {
			if *x.dst, err = p.integer(v, join(field, x.key), 0, math.MaxInt); err != nil {
				return u, err
			}
		}
	}
	return u, nil
}

func (p *parser) failure(n *yaml.Node, field string) (*failure, error) {
	f, err := p.object(n, field, "kind", "message", "status", "retryAfter", "partial")
	if err != nil {
		return nil, err
	}
	kn, ok := f["kind"]
	if !ok {
		return nil, p.errAt(resolve(n), join(field, "kind"), "missing (one of %s)", kindNames())
	}
	ks, err := p.str(kn, join(field, "kind"))
	if err != nil {
		return nil, err
	}
	def, ok := errorKind(llm.ErrorKind(ks))
	if !ok {
		hint := ""
		if llm.ErrorKind(ks) == llm.KindAborted {
			hint = "; aborted happens only when the caller cancels"
		}
		return nil, p.errAt(resolve(kn), join(field, "kind"), "unknown error kind %q (want one of %s%s)", ks, kindNames(), hint)
	}
	fl := &failure{kind: llm.ErrorKind(ks), status: def.status, message: "scripted " + ks + " error"}
	if v, ok := f["message"]; ok {
		if fl.message, err = p.str(v, join(field, "message")); err != nil {
			return nil, err
		}
		if strings.TrimSpace(fl.message) == "" {
			return nil, p.errAt(resolve(v), join(field, "message"), "must not be empty")
		}
	}
	if v, ok := f["status"]; ok {
		if fl.status, err = p.integer(v, join(field, "status"), 100, 599); err != nil {
			return nil, err
		}
	}
	if v, ok := f["retryAfter"]; ok {
		if fl.retryAfter, err = p.duration(v, join(field, "retryAfter")); err != nil {
			return nil, err
		}
	}
	if v, ok := f["partial"]; ok {
		if fl.partial, err = p.str(v, join(field, "partial")); err != nil {
			return nil, err
		}
	}
	return fl, nil
}

// toJSON writes n as compact JSON, keeping the order of mapping keys.
func (p *parser) toJSON(n *yaml.Node, field string, b *bytes.Buffer, depth int) error {
	if depth > 100 {
		return p.errAt(n, field, "nested too deeply")
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return p.errAt(k, field, "an object key must be a plain string, got %s", describe(k))
			}
			if seen[k.Value] {
				return p.errAt(k, join(field, k.Value), "duplicate key %q", k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k.Value)
			b.WriteByte(':')
			if err := p.toJSON(n.Content[i+1], join(field, k.Value), b, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := p.toJSON(item, fmt.Sprintf("%s[%d]", field, i), b, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return p.errAt(n, field, "invalid boolean %q", n.Value)
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int", "!!float":
			if isJSONNumber(n.Value) {
				b.WriteString(n.Value)
				return nil
			}
			if n.ShortTag() == "!!int" {
				var i int64
				if err := n.Decode(&i); err != nil {
					return p.errAt(n, field, "invalid integer %q", n.Value)
				}
				b.WriteString(strconv.FormatInt(i, 10))
				return nil
			}
			var v float64
			if err := n.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return p.errAt(n, field, "%q is not a JSON number; quote it to send a string", n.Value)
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		default: // strings, and timestamps or binary kept as their text
			writeJSONString(b, n.Value)
		}
	default:
		return p.errAt(n, field, "want a JSON value, got %s", describe(n))
	}
	return nil
}

var jsonNumber = lazyre.Regexp{Expr: `^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`}

func isJSONNumber(s string) bool { return jsonNumber.Compiled().MatchString(s) }

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
