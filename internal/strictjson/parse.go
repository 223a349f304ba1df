package strictjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting.
const maxJSONDepth = 256

// errNotUTF8 is the one error both entry points report before parsing.
var errNotUTF8 = errors.New("(root): not valid UTF-8")

// Decode parses text as exactly one JSON value, strictly:
// valid UTF-8, no duplicate keys at any depth, nothing but whitespace after the value. Objects
// decode to map[string]any, arrays to []any and numbers to [json.Number]. Error messages
// start with the path of the offending value ("(root)", "edits[0].oldText").
func Decode(text string) (any, error) {
	return decode([]byte(text))
}

// Check accepts and refuses exactly what [Decode] does, with the same error, but builds no
// values: it is the cheap way to validate JSON that is kept as bytes. Unless it fails, it
// allocates only for object keys written with escapes and for objects with more than 16 keys.
// text is only read, and nothing of it is retained.
func Check(text []byte) error {
	return CheckMembers(text, nil)
}

// CheckMembers is [Check] that also shows the caller the members of the top-level value, when
// it is an object, so that a caller who needs a few of them does not parse text again: member
// is called for each, in order, with its key's literal as written (quotes and escapes
// included) and its value as written (without the whitespace around it), both slices of text.
// The calls are made while checking: when CheckMembers then fails, they mean nothing.
func CheckMembers(text []byte, member func(key, value []byte)) error {
	if !utf8.Valid(text) {
		return errNotUTF8
	}
	p := &parser{s: text}
	_, err := p.parse(member)
	return err
}

// decode is Decode for bytes. The tree shares no memory with text.
func decode(text []byte) (any, error) {
	if !utf8.Valid(text) {
		return nil, errNotUTF8
	}
	p := &parser{s: text, build: true}
	return p.parse(nil)
}

// parser is a strict JSON parser. Unlike encoding/json it refuses duplicate keys (at any
// depth) and anything after the first value, and it reports where the problem is. Input must
// already be valid UTF-8. With build set it returns the value (objects as map[string]any,
// arrays as []any, numbers as json.Number); without, it only checks, and every value it
// returns is nil. Both modes run the same code, so they accept the same inputs.
type parser struct {
	s     []byte
	pos   int
	depth int
	build bool
}

// parse reads one value and requires the rest of the input to be whitespace. If the value is
// an object and member is not nil, member is called for each of its members (see CheckMembers).
func (p *parser) parse(member func(key, value []byte)) (any, error) {
	v, err := p.value(member)
	if err != nil {
		return nil, errors.New(err.Error())
	}
	p.space()
	if p.pos < len(p.s) {
		return nil, fmt.Errorf("(root): unexpected data after the JSON value at offset %d: %s", p.pos, p.near())
	}
	return v, nil
}

// syntaxError is what is wrong, and where. The path is not tracked while parsing succeeds:
// each object and array adds its step as the error returns through it.
type syntaxError struct {
	rev []step // the path to the offending value, innermost first
	msg string
}

func (e *syntaxError) Error() string { return ShowPath(e.path()) + ": " + e.msg }

// step is one element of a value path: an object key, or an array index.
type step struct {
	key   []byte // decoded; nil for an index
	index int    // -1 for a key
}

// in adds the step of the value that contains the error's to its path.
func (e *syntaxError) in(st step) *syntaxError {
	e.rev = append(e.rev, st)
	return e
}

// path renders the path, as KeyPath would have built it.
func (e *syntaxError) path() string {
	path := ""
	for i := len(e.rev) - 1; i >= 0; i-- {
		if st := e.rev[i]; st.index < 0 {
			path = KeyPath(path, string(st.key))
		} else {
			path = fmt.Sprintf("%s[%d]", path, st.index)
		}
	}
	return path
}

func (p *parser) near() string {
	end := min(p.pos+20, len(p.s))
	for end < len(p.s) && end > p.pos && p.s[end]&0xC0 == 0x80 {
		end++
	}
	return fmt.Sprintf("%q", string(p.s[p.pos:end]))
}

// errorf reports a syntax error at p.pos in the value being parsed.
func (p *parser) errorf(format string, args ...any) *syntaxError {
	where := "end of input"
	if p.pos < len(p.s) {
		where = fmt.Sprintf("offset %d (near %s)", p.pos, p.near())
	}
	return &syntaxError{msg: fmt.Sprintf("invalid JSON at %s: %s", where, fmt.Sprintf(format, args...))}
}

func (p *parser) space() {
	for p.pos < len(p.s) && p.s[p.pos] <= ' ' { // one test for the usual case, no whitespace
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// literal consumes word (true, false, null) if the input continues with it.
func (p *parser) literal(word string) bool {
	if len(p.s)-p.pos < len(word) || string(p.s[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

// value reads a value. If it is an object and member is not nil, member is called for each of
// its members. (The callback is passed down rather than kept in p so that it does not escape.)
func (p *parser) value(member func(key, value []byte)) (any, *syntaxError) {
	p.space()
	if p.pos >= len(p.s) {
		return nil, p.errorf("expected a value")
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object(member)
	case c == '[':
		return p.array()
	case c == '"':
		start, escaped, err := p.str()
		if err != nil || !p.build {
			return nil, err
		}
		text, err := p.unquote(start, escaped)
		if err != nil {
			return nil, err
		}
		return text, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	}
	return nil, p.errorf("expected a value")
}

func (p *parser) enter() *syntaxError {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.errorf("nested deeper than %d levels", maxJSONDepth)
	}
	return nil
}

func (p *parser) object(member func(key, value []byte)) (any, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	var obj map[string]any
	if p.build {
		obj = map[string]any{}
	}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	var seen keySet // without build: the keys so far, for the duplicate test
	for {
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return nil, p.errorf("expected a quoted property name")
		}
		keyStart := p.pos
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		keyEnd := p.pos
		var dup bool
		if p.build {
			_, dup = obj[string(key)]
		} else {
			dup = seen.add(key)
		}
		at := step{key: key, index: -1}
		if dup {
			return nil, (&syntaxError{msg: fmt.Sprintf("duplicate key %q; each property may appear only once", key)}).in(at)
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return nil, p.errorf("expected ':' after the property name").in(at)
		}
		p.pos++
		p.space()
		valueStart := p.pos
		v, err := p.value(nil)
		if err != nil {
			return nil, err.in(at)
		}
		if member != nil {
			member(p.s[keyStart:keyEnd], p.s[valueStart:p.pos])
		}
		if p.build {
			obj[string(key)] = v
		}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return obj, nil
		}
		return nil, p.errorf("expected ',' or '}'")
	}
}

// keySet is the keys an object has had so far, for Check's duplicate test (Decode has the map
// it builds). The first 16 are kept in few, without allocating, and a new key is compared with
// them only if one of them has its signature; past 16, a map keeps the test linear in the
// number of keys.
type keySet struct {
	few  [16][]byte
	n    int
	sigs uint64 // the signatures of few's keys
	many map[string]struct{}
}

// signature is one bit chosen by key's length and last byte: keys with different signatures
// differ.
func signature(key []byte) uint64 {
	h := uint(len(key))
	if len(key) > 0 {
		h = h*31 + uint(key[len(key)-1])
	}
	return 1 << (h % 64)
}

// add adds key and reports whether it was there already.
func (s *keySet) add(key []byte) (dup bool) {
	if s.many != nil {
		if _, dup = s.many[string(key)]; !dup {
			s.many[string(key)] = struct{}{}
		}
		return dup
	}
	sig := signature(key)
	if s.sigs&sig != 0 {
		for _, k := range s.few[:s.n] {
			if bytes.Equal(k, key) {
				return true
			}
		}
	}
	if s.n < len(s.few) {
		s.few[s.n] = key
		s.n++
		s.sigs |= sig
		return false
	}
	s.many = make(map[string]struct{}, 4*len(s.few))
	for _, k := range s.few {
		s.many[string(k)] = struct{}{}
	}
	s.many[string(key)] = struct{}{}
	return false
}

func (p *parser) array() (any, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	var arr []any
	if p.build {
		arr = []any{}
	}
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for i := 0; ; i++ {
		v, err := p.value(nil)
		if err != nil {
			return nil, err.in(step{index: i})
		}
		if p.build {
			arr = append(arr, v)
		}
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return arr, nil
		}
		return nil, p.errorf("expected ',' or ']'")
	}
}

// str scans the string literal at p.pos (its opening quote) up to and including its closing
// quote, and checks its escapes. It returns where the literal starts and whether it has
// escapes; the literal is p.s[start:p.pos].
func (p *parser) str() (start int, escaped bool, err *syntaxError) {
	start = p.pos
	s, i := p.s, p.pos+1 // after the opening quote
	for {
		if i = skipPlain(s, i); i >= len(s) {
			break
		}
		switch c := s[i]; {
		case c == '"':
			p.pos = i + 1
			if escaped && !validEscapes(s[start+1:i]) {
				p.pos = start
				return start, escaped, p.errorf("bad escape in string")
			}
			return start, escaped, nil
		case c == '\\':
			escaped = true
			i += 2
		default: // c < 0x20
			p.pos = i
			return start, escaped, p.errorf("control character in string (write it escaped, e.g. \\n or \\t)")
		}
	}
	p.pos = len(s)
	return start, escaped, p.errorf("unterminated string")
}

// skipPlain returns the index of the first byte of s from i on that a string does not hold as
// it is (a quote, a backslash or a control character), or len(s). Strings are most of JSON's
// bytes, so it looks at eight at a time.
func skipPlain(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := special8(binary.LittleEndian.Uint64(s[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// plainByte says which bytes a string holds as they are: all but quotes, backslashes and
// control characters.
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// special8 flags (with its high bit) each byte of the little-endian word w that is a quote, a
// backslash or a control character, using (x - 0x01…) &^ x & 0x80…, which flags the bytes of
// x that are zero, and (x - 0x20…) &^ x & 0x80…, which flags those below 0x20. A borrow can
// flag a byte above a flagged one falsely, never below: the lowest flag, the one skipPlain
// uses, is exact, and the result is zero exactly when no byte is special.
func special8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (w-ones*0x20)&^w) & highs
}

// validEscapes reports whether every backslash in the contents of a string literal starts an
// escape JSON allows: \" \\ \/ \b \f \n \r \t, or \u and four hex digits. (encoding/json
// allows the same; lone surrogates decode to U+FFFD.)
func validEscapes(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if len(s)-i <= 4 {
				return false
			}
			for _, h := range s[i+1 : i+5] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return false
				}
			}
			i += 4
		default:
			return false
		}
	}
	return true
}

// unquote returns the value of the string literal p.s[start:p.pos] that str just scanned.
func (p *parser) unquote(start int, escaped bool) (string, *syntaxError) {
	if !escaped {
		return string(p.s[start+1 : p.pos-1]), nil
	}
	var out string
	if err := json.Unmarshal(p.s[start:p.pos], &out); err != nil {
		p.pos = start
		return "", p.errorf("bad escape in string")
	}
	return out, nil
}

// key scans an object key and returns it decoded: the key's own bytes in p.s when it has no
// escapes.
func (p *parser) key() ([]byte, *syntaxError) {
	start, escaped, err := p.str()
	if err != nil {
		return nil, err
	}
	if !escaped {
		return p.s[start+1 : p.pos-1], nil
	}
	k, err := p.unquote(start, escaped)
	return []byte(k), err
}

func (p *parser) number() (any, *syntaxError) {
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
		return nil, p.errorf("malformed number")
	}
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if !p.build {
		return nil, nil
	}
	return json.Number(string(p.s[start:p.pos])), nil
}
