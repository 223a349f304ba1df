package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/strictjson"
)

// Format constants. See doc.go for the line format.
const (
	// FormatVersion is the newest envelope version this package reads and writes. A line is
	// written as version 1 unless it carries "synced" (see doc.go), which needs version 2, or
	// version 3 for synced 0 (not even the header durable: a deferred Create); the header is
	// always version 1.
	FormatVersion = 3
	// MaxLineBytes caps a line, newline included. Larger payloads go to the blob store.
	MaxLineBytes = 1 << 20
	// FileName, LockName and BlobDir are the ledger's entries in its directory.
	FileName = "ledger.jsonl"
	LockName = "ledger.lock"
	BlobDir  = "blobs"
	// TornPrefix starts the name of an evidence copy: ledger.jsonl.torn-<seq>[.<n>].
	TornPrefix = FileName + ".torn-"
)

// Kinds owned by this package. Append refuses them; readers must know them.
const (
	KindHeader   = "header"   // seq 1, body: Header
	KindRecovery = "recovery" // after a torn-tail repair, body: Recovery
	KindSalvage  = "salvage"  // after the prefix copied by Salvage, body: SalvageInfo
)

// Type is what a ledger records.
type Type string

// Ledger types.
const (
	TypeSession Type = "session"
	TypeRun     Type = "run"
	TypeLoop    Type = "loop"
)

// Header is the body of seq 1.
type Header struct {
	Type Type   `json:"type"`
	ID   string `json:"id"` // the ledger's id; also the header record's id
	// Format is the FormatVersion the ledger was created with (set by Create).
	Format int `json:"format"`
	// Bindings names what the ledger is bound to (for a run: the lock digests; for a fork: the
	// parent session and entry). Free-form; encoded with sorted keys.
	Bindings map[string]string `json:"bindings,omitempty"`
}

// Recovery is the body of a recovery record.
type Recovery struct {
	TruncatedBytes  int64  `json:"truncatedBytes"`
	DiscardedSHA256 string `json:"discardedSha256"`
	Evidence        string `json:"evidence"` // file name of the evidence copy, in the ledger directory
}

// Record is one verified line.
type Record struct {
	V        int
	Seq      int64
	ID       string
	ParentID string // "" when the line has "parentId":null
	Kind     string
	TS       time.Time
	Body     json.RawMessage // the body's bytes exactly as written
	// Synced is, for a version 2 line, the seq through which the writer had fsynced the ledger
	// when it wrote this record (at most Seq-2: records Synced+1..Seq-1 were not yet durable).
	// 0 for a version 1 line, which the writer wrote with every record before it durable.
	Synced int64
	Prev   string // hex h of seq-1; "" for seq 1
	H      string // hex sha256(Prev ‖ payload)
	Offset int64  // byte offset of the line in the file
}

// Skippable reports whether a reader that does not know kind may skip the record: kinds
// beginning with "x-" are skippable, every other unknown kind must stop the reader.
func Skippable(kind string) bool { return strings.HasPrefix(kind, "x-") }

// members of the payload, in order. The line adds "h" last. A version 2 line has "synced"
// between "seq" and "id".
var envelope = [...]string{`"v"`, `"seq"`, `"id"`, `"parentId"`, `"kind"`, `"ts"`, `"body"`, `"prev"`}

const syncedMember = `"synced"`

const (
	hexLen     = 2 * sha256.Size
	trailerLen = len(`,"h":"`) + hexLen + len(`"}`) // 72
	maxIDLen   = 128
	maxKindLen = 64
)

// ValidID reports whether s may be a record id: 1 to 128 of [A-Za-z0-9._:-].
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > maxIDLen {
		return false
	}
	var bad byte // no branch per character: ids (UUIDs) mix digits, letters and dashes at random
	for i := 0; i < len(s); i++ {
		bad |= notIDChar[s[i]]
	}
	return bad == 0
}

// notIDChar is 1 for every byte but A-Z a-z 0-9 . _ : -.
var notIDChar = func() (t [256]byte) {
	for i := range t {
		if !(i >= 'a' && i <= 'z' || i >= 'A' && i <= 'Z' || i >= '0' && i <= '9' || i == '.' || i == '_' || i == ':' || i == '-') {
			t[i] = 1
		}
	}
	return t
}()

// ValidKind reports whether s may be a kind: 1 to 64 of [a-z0-9_.-], starting with a letter.
func ValidKind(s string) bool {
	if len(s) == 0 || len(s) > maxKindLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validHex reports whether s is 64 lowercase hex characters.
func validHex[T string | []byte](s T) bool {
	if len(s) != hexLen {
		return false
	}
	// A table and no branch per character: in a hash they are random, and a branch on each
	// would be mispredicted half the time.
	var bad byte
	for i := 0; i < len(s); i++ {
		bad |= notHex[s[i]]
	}
	return bad == 0
}

// notHex is 1 for every byte but the lowercase hex digits.
var notHex = func() (t [256]byte) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range "0123456789abcdef" {
		t[c] = 0
	}
	return t
}()

// hashIs reports whether sum is the hash written as h.
func hashIs(sum [sha256.Size]byte, h string) bool {
	if len(h) != hexLen {
		return false
	}
	for i, b := range sum {
		if pair := hexPairs[b]; h[2*i] != pair[0] || h[2*i+1] != pair[1] {
			return false
		}
	}
	return true
}

// hexPairs[b] is b in two lowercase hex digits.
var hexPairs = func() (t [256][2]byte) {
	for b := range t {
		t[b] = [2]byte{"0123456789abcdef"[b>>4], "0123456789abcdef"[b&15]}
	}
	return t
}()

// chainHash is h = sha256(prev ‖ payload), prev being the 64 ASCII hex characters of the previous
// h (nothing for seq 1) and payload the line's bytes up to the trailer plus the closing "}".
func chainHash(prev string, head []byte) [sha256.Size]byte {
	d := sha256.New()
	var pb [hexLen]byte // prev through a stack array: converting it to []byte would allocate
	d.Write(append(pb[:0], prev...))
	d.Write(head)
	d.Write([]byte("}"))
	var sum [sha256.Size]byte
	d.Sum(sum[:0])
	return sum
}

// buildLine renders a record. body must be compact JSON without newlines. v ≥ 2 writes the
// "synced" member.
func buildLine(v int, seq, synced int64, id, parent, kind string, ts time.Time, body []byte, prev string) ([]byte, [sha256.Size]byte) {
	// The envelope around the variable members is under 320 bytes (two hashes, the time, the
	// numbers, the member names): one allocation, never regrown.
	b := make([]byte, 0, 320+len(id)+len(parent)+len(kind)+len(body))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(v), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	if v >= 2 {
		b = append(b, `,"synced":`...)
		b = strconv.AppendInt(b, synced, 10)
	}
	b = append(b, `,"id":`...)
	b = strconv.AppendQuote(b, id) // ids are restricted to characters JSON and Go quote alike
	b = append(b, `,"parentId":`...)
	if parent == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, parent)
	}
	b = append(b, `,"kind":`...)
	b = strconv.AppendQuote(b, kind)
	b = append(b, `,"ts":"`...)
	b = ts.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","body":`...)
	b = append(b, body...)
	b = append(b, `,"prev":"`...)
	b = append(b, prev...)
	b = append(b, '"')
	sum := chainHash(prev, b)
	b = append(b, `,"h":"`...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, "\"}\n"...)
	return b, sum
}

// lineError is why a line is not a valid record. complete says whether the line is nevertheless
// a syntactically complete record (well-formed trailer, strict JSON payload): a complete record
// can never be a torn write, so it is corruption wherever it stands.
type lineError struct {
	complete bool
	reason   string
	err      error // a non-corruption condition (ErrUnsupportedVersion), else nil
}

func (e *lineError) Error() string { return e.reason }

func notRecord(format string, args ...any) *lineError {
	return &lineError{reason: fmt.Sprintf(format, args...)}
}

func badRecord(format string, args ...any) *lineError {
	return &lineError{complete: true, reason: fmt.Sprintf(format, args...)}
}

// parseLine checks one line (without its newline) on its own: cap, trailer shape, strict JSON,
// member order and types. The chain (seq, prev, h, ids) is checked by chain.accept. The
// record's Body is a slice of line.
func parseLine(line []byte) (Record, *lineError) {
	var r Record
	if len(line)+1 > MaxLineBytes {
		return r, notRecord("line of %d bytes exceeds the %d-byte cap", len(line)+1, MaxLineBytes)
	}
	n := len(line)
	if n < trailerLen+2 || string(line[n-trailerLen:n-hexLen-2]) != `,"h":"` || string(line[n-2:]) != `"}` ||
		!validHex(line[n-hexLen-2:n-2]) {
		return r, notRecord("no trailer: a line must end with ,\"h\":\"<64 lowercase hex>\"}")
	}
	if line[0] != '{' {
		return r, notRecord("a line must start with {")
	}
	r.H = string(line[n-hexLen-2 : n-2])
	m, synced, le := envelopeMembers(line, line[:n-trailerLen])
	if le != nil {
		return r, le
	}
	v, ok := intMember(m[0])
	if !ok || v < 1 {
		return r, badRecord("v is not a positive integer")
	}
	if v > FormatVersion {
		return r, &lineError{complete: true, reason: fmt.Sprintf("format version %d is newer than this reader (%d)", v, FormatVersion),
			err: ErrUnsupportedVersion}
	}
	r.V = int(v)
	if r.Seq, ok = intMember(m[1]); !ok || r.Seq < 1 {
		return r, badRecord("seq is not a positive integer")
	}
	switch {
	case synced == nil && r.V >= 2:
		return r, badRecord("a version %d line must have synced", r.V)
	case synced != nil && r.V < 2:
		return r, badRecord("synced in a version 1 line")
	case synced != nil:
		least := int64(1) // a version 2 line; version 3 adds synced 0
		if r.V >= 3 {
			least = 0
		}
		if r.Synced, ok = intMember(synced); !ok || r.Synced < least || r.Synced > r.Seq-2 {
			return r, badRecord("synced is not an integer from %d to seq-2 in a version %d line", least, r.V)
		}
	}
	if r.ID, ok = stringMember(m[2]); !ok || !ValidID(r.ID) {
		return r, badRecord("id is not a valid id")
	}
	switch p, ok := stringMember(m[3]); {
	case string(m[3]) == "null":
	case ok:
		if !ValidID(p) {
			return r, badRecord("parentId is not a valid id")
		}
		r.ParentID = p
	default:
		return r, badRecord("parentId is neither a string nor null")
	}
	if r.Kind, ok = stringMember(m[4]); !ok || !ValidKind(r.Kind) {
		return r, badRecord("kind is not a valid kind")
	}
	ts, ok := stringMember(m[5])
	if !ok {
		return r, badRecord("ts is not a string")
	}
	var err error
	if r.TS, err = time.Parse(time.RFC3339Nano, ts); err != nil {
		return r, badRecord("ts is not an RFC 3339 time")
	}
	r.Body = json.RawMessage(m[6]) // in line: a caller that keeps the record past line's reuse clones it
	if r.Prev, ok = stringMember(m[7]); !ok || r.Prev != "" && !validHex(r.Prev) {
		return r, badRecord("prev is neither empty nor 64 lowercase hex")
	}
	return r, nil
}

// decodeHeader decodes a header body as strictjson.Unmarshal would into a Header (every key the
// exact name of a field, each value of the field's type, null leaving a field as it is) by
// reading the members the strict parser shows: a new ledger's first record is checked as it is
// written, and decoding it by reflection cost more than the rest of Create together.
func decodeHeader(body []byte, h *Header) error {
	var bad error
	fail := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	err := strictjson.CheckMembers(body, func(rawKey, value []byte) {
		key, _ := stringMember(rawKey)
		switch {
		case !slices.Contains(headerKeys, key):
			fail(fmt.Errorf("unknown field %q in the header", key))
		case string(value) == "null": // leaves the field as it is
		case key == "format":
			n, ok := intMember(value)
			if !ok {
				fail(errors.New("header format is not a non-negative integer"))
			}
			h.Format = int(n)
		case key == "bindings":
			h.Bindings = map[string]string{}
			if value[0] != '{' {
				fail(errors.New("header bindings is not an object"))
				return
			}
			_ = strictjson.CheckMembers(value, func(rawName, v []byte) {
				name, _ := stringMember(rawName)
				b, ok := stringMember(v)
				if !ok {
					fail(fmt.Errorf("header binding %q is not a string", name))
				}
				h.Bindings[name] = b
			})
		default: // type, id
			str, ok := stringMember(value)
			if !ok {
				fail(fmt.Errorf("header %s is not a string", key))
			}
			if key == "type" {
				h.Type = Type(str)
			} else {
				h.ID = str
			}
		}
	})
	switch {
	case err != nil:
		return err
	case len(body) == 0 || body[0] != '{':
		return errors.New("the header body is not an object")
	}
	return bad
}

// headerKeys are the JSON names of Header's fields.
var headerKeys = []string{"type", "id", "format", "bindings"}

// intMember reads a member that must be a non-negative integer written plainly (no sign,
// fraction, exponent or leading zero).
func intMember(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 1 && raw[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false // out of int64's range
		}
		n = n*10 + d
	}
	return n, true
}

// stringMember reads a member that must be a string, as strictjson decodes it.
func stringMember(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// envelopeMembers checks that a line's payload, head + "}" (head being the line up to its
// trailer), is strict JSON whose members are exactly the envelope's, in order, and returns
// their values as written.
//
// It checks the line itself, head + `,"h":"<hex>"}`, and so builds nothing: the trailer can
// only parse as a last member "h" of the top-level object, so the line is strict JSON exactly
// when the payload is, has a member and has no member "h", and then the line's members are the
// payload's and h. Only a line that is not strict JSON has its payload built, to tell those
// cases apart and to report the payload's own error.
//
// The optional "synced" member, if it stands right after "seq", is returned apart.
func envelopeMembers(line, head []byte) (m [len(envelope)][]byte, synced []byte, le *lineError) {
	n, inOrder := 0, true
	collect := func(key, value []byte) {
		if n == 2 && synced == nil && string(key) == syncedMember {
			synced = value
			return
		}
		if n < len(envelope) {
			if string(key) == envelope[n] {
				m[n] = value
			} else {
				inOrder = false
			}
		}
		n++
	}
	want := len(envelope) + 1 // h
	if strictjson.CheckMembers(line, collect) != nil {
		payload := make([]byte, 0, len(head)+1)
		payload = append(append(payload, head...), '}')
		n, inOrder, want, synced = 0, true, len(envelope), nil
		if err := strictjson.CheckMembers(payload, collect); err != nil {
			return m, nil, notRecord("not strict JSON: %v", err)
		}
	}
	if n != want || !inOrder {
		return m, nil, badRecord("the members before h must be exactly %s, in this order (a version 2 line has synced after seq)", strings.Join(envelope[:], ","))
	}
	return m, synced, nil
}

// chain is the verifier's state: everything a line is checked against.
type chain struct {
	seq    int64
	prev   string
	ids    map[string]struct{}
	staged map[string]struct{} // a writer's probe: ids of the batch being built, not yet in ids
	hashes [][sha256.Size]byte
	header Header
}

func newChain() *chain { return &chain{ids: map[string]struct{}{}} }

// accept verifies line as record seq+1 and advances the chain.
func (c *chain) accept(line []byte) (Record, *lineError) {
	r, sum, le := c.check(line)
	if le == nil {
		c.commit(r, sum)
	}
	return r, le
}

// check verifies line as record seq+1 without changing the chain, and returns the record and
// its h.
func (c *chain) check(line []byte) (r Record, sum [sha256.Size]byte, le *lineError) {
	r, le = parseLine(line)
	if le != nil && le.err == ErrUnsupportedVersion {
		// Only a record that chains correctly is a newer writer's; otherwise it is damage.
		if !hashIs(chainHash(c.prev, line[:len(line)-trailerLen]), r.H) {
			return r, sum, badRecord("%s, and h does not match the record's bytes", le.reason)
		}
	}
	if le != nil {
		return r, sum, le
	}
	want := c.seq + 1
	if r.Seq != want {
		return r, sum, badRecord("seq %d where seq %d was expected", r.Seq, want)
	}
	if r.Prev != c.prev {
		return r, sum, badRecord("prev does not match the h of seq %d", c.seq)
	}
	sum = chainHash(r.Prev, line[:len(line)-trailerLen])
	if !hashIs(sum, r.H) {
		return r, sum, badRecord("h does not match the record's bytes")
	}
	if c.has(r.ID) {
		return r, sum, badRecord("id %q is already used by an earlier record", r.ID)
	}
	if r.ParentID != "" && !c.has(r.ParentID) {
		return r, sum, badRecord("parentId %q names no earlier record", r.ParentID)
	}
	if want == 1 {
		if _, err := parseHeader(r); err != nil {
			return r, sum, badRecord("header: %v", err)
		}
	} else if r.Kind == KindHeader {
		return r, sum, badRecord("a header record after seq 1")
	}
	return r, sum, nil
}

// has reports whether id is taken by an earlier record.
func (c *chain) has(id string) bool {
	if _, ok := c.ids[id]; ok {
		return true
	}
	_, ok := c.staged[id]
	return ok
}

// stage advances a writer's probe past r without touching the shared ids.
// A probe for a single record has no staged set.
func (c *chain) stage(r Record) {
	if c.staged != nil {
		c.staged[r.ID] = struct{}{}
	}
	c.seq = r.Seq
	c.prev = r.H
}

// commit advances the chain past r, whose h is sum, which check accepted.
func (c *chain) commit(r Record, sum [sha256.Size]byte) {
	if r.Seq == 1 {
		c.header, _ = parseHeader(r)
	}
	c.ids[r.ID] = struct{}{}
	c.hashes = append(c.hashes, sum)
	c.seq = r.Seq
	c.prev = r.H
}

func parseHeader(r Record) (Header, error) {
	var h Header
	if r.Kind != KindHeader {
		return h, fmt.Errorf("seq 1 has kind %q, want %q", r.Kind, KindHeader)
	}
	if r.ParentID != "" {
		return h, errors.New("the header has a parentId")
	}
	if err := decodeHeader(r.Body, &h); err != nil {
		return h, err
	}
	if !ValidKind(string(h.Type)) {
		return h, fmt.Errorf("ledger type %q is not valid", h.Type)
	}
	if h.ID != r.ID {
		return h, fmt.Errorf("header id %q differs from the record id %q", h.ID, r.ID)
	}
	if h.Format != r.V {
		return h, fmt.Errorf("header format %d differs from the record's v %d", h.Format, r.V)
	}
	return h, nil
}
