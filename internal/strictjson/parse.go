package strictjson

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting.
const maxJSONDepth = 256

// Decode parses text as exactly one JSON value, strictly:
// valid UTF-8, no duplicate keys at any depth, nothing but whitespace after the value. Objects
// decode to map[string]any, arrays to []any and numbers to [json.Number]. Error messages
// start with the path of the offending value ("(root)", "edits[0].oldText").
func Decode(text string) (any, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("(root): not valid UTF-8")
	}
	return parse(text)
}

// parse is Decode for text already known to be valid UTF-8.
func parse(text string) (any, error) {
	p := &parser{s: text}
	return p.parse()
}

// parser is a strict JSON parser. Unlike encoding/json it refuses duplicate
// keys (at any depth) and anything after the first value, and it reports where the problem is.
// Input must already be valid UTF-8. Objects decode to map[string]any, arrays to []any and
// numbers to json.Number.
type parser struct {
	s     string
	pos   int
	depth int
}

// parse reads one value and requires the rest of the input to be whitespace.
func (p *parser) parse() (any, error) {
	v, err := p.value("")
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.s) {
		return nil, fmt.Errorf("(root): unexpected data after the JSON value at offset %d: %s", p.pos, p.near())
	}
	return v, nil
}

func (p *parser) near() string {
	end := min(p.pos+20, len(p.s))
	for end < len(p.s) && end > p.pos && p.s[end]&0xC0 == 0x80 {
		end++
	}
	return fmt.Sprintf("%q", p.s[p.pos:end])
}

func (p *parser) errorf(path, format string, args ...any) error {
	where := "end of input"
	if p.pos < len(p.s) {
		where = fmt.Sprintf("offset %d (near %s)", p.pos, p.near())
	}
	return fmt.Errorf("%s: invalid JSON at %s: %s", ShowPath(path), where, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(path string) (any, error) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.errorf(path, "expected a value")
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object(path)
	case c == '[':
		return p.array(path)
	case c == '"':
		return p.str(path)
	case c == '-' || c >= '0' && c <= '9':
		return p.number(path)
	case strings.HasPrefix(p.s[p.pos:], "true"):
		p.pos += 4
		return true, nil
	case strings.HasPrefix(p.s[p.pos:], "false"):
		p.pos += 5
		return false, nil
	case strings.HasPrefix(p.s[p.pos:], "null"):
		p.pos += 4
		return nil, nil
	}
	return nil, p.errorf(path, "expected a value")
}

func (p *parser) enter(path string) error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.errorf(path, "nested deeper than %d levels", maxJSONDepth)
	}
	return nil
}

func (p *parser) object(path string) (any, error) {
	if err := p.enter(path); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	obj := map[string]any{}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return nil, p.errorf(path, "expected a quoted property name")
		}
		k, err := p.str(path)
		if err != nil {
			return nil, err
		}
		key := k.(string)
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("%s: duplicate key %q; each property may appear only once", ShowPath(KeyPath(path, key)), key)
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, p.errorf(KeyPath(path, key), "expected ':' after the property name")
		}
		p.pos++
		v, err := p.value(KeyPath(path, key))
		if err != nil {
			return nil, err
		}
		obj[key] = v
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return obj, nil
		}
		return nil, p.errorf(path, "expected ',' or '}'")
	}
}

func (p *parser) array(path string) (any, error) {
	if err := p.enter(path); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	arr := []any{}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		v, err := p.value(fmt.Sprintf("%s[%d]", path, len(arr)))
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return arr, nil
		}
		return nil, p.errorf(path, "expected ',' or ']'")
	}
}

func (p *parser) str(path string) (any, error) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			lit := p.s[start:p.pos]
			if !escaped {
				return lit[1 : len(lit)-1], nil
			}
			var out string
			if err := json.Unmarshal([]byte(lit), &out); err != nil {
				p.pos = start
				return nil, p.errorf(path, "bad escape in string")
			}
			return out, nil
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return nil, p.errorf(path, "control character in string (write it escaped, e.g. \\n or \\t)")
		default:
			p.pos++
		}
	}
	p.pos = len(p.s)
	return nil, p.errorf(path, "unterminated string")
}

func (p *parser) number(path string) (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.s[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.s) && p.s[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.errorf(path, "malformed number")
	}
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf(path, "malformed number")
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf(path, "malformed number")
		}
	}
	return json.Number(p.s[start:p.pos]), nil
}
