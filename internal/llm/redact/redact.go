package redact

import (
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/secret"
)

// MaxText bounds an error text, marker included.
const MaxText = 1 << 10

// Markers put in place of what is removed.
const (
	keyMarker    = "[REDACTED:api-key]"
	headerMarker = "[REDACTED:auth-header]"
	// adapterMarker is what the adapters put in place of the key they send.
	adapterMarker = "[redacted]"
)

// minKeyForFragments is the shortest key whose masked fragments are matched; minFragment the
// shortest fragment that counts.
const (
	minKeyForFragments = 8
	minFragment        = 4
)

// The expressions are compiled on first use, not at package load.
var (
	// headerValue finds a credential header quoted in a text: the name, the separator (with
	// quotes and a Go header map's "["), an optional scheme, and the value.
	headerValue = lazyre.Regexp{Expr: `(?i)\b((?:proxy-)?authorization|x-goog-api-key|x-api-key|api-key)(["']?\s*[:=]\s*\[?["']?)((?:bearer|basic|token|apikey)\s+)?([^\s"'\[\],;{}]+)`}
	// authSchemes are the scheme words a header value may start with.
	authSchemes = []string{"bearer", "basic", "token", "apikey"}
	// maskRun is a run of masking characters: asterisks, bullets, ellipses, three or more dots.
	maskRun = lazyre.Regexp{Expr: `(?:[*•●…]|\.{3,})+`}
)

// Redactor removes keys, credential headers and secrets from error text and bounds it. The
// zero value removes headers and scanner findings only. See the package documentation.
type Redactor struct {
	keys []string // distinct, non-empty, longest first
}

// New returns a redactor for keys (empty ones and duplicates are ignored).
func New(keys ...string) *Redactor {
	r := &Redactor{}
	for _, k := range keys {
		if k != "" && !slices.Contains(r.keys, k) {
			r.keys = append(r.keys, k)
		}
	}
	// Longest first: a key that contains another is removed whole.
	slices.SortStableFunc(r.keys, func(a, b string) int { return len(b) - len(a) })
	return r
}

// Text returns s without keys, credential header values or secrets, HTML reduced to its title
// and cut to [MaxText] bytes.
func (r *Redactor) Text(s string) string {
	if len(r.keys) > 0 {
		// The adapters put "[redacted]" where they removed the key themselves.
		s = strings.ReplaceAll(s, adapterMarker, keyMarker)
	}
	s = headerValue.Compiled().ReplaceAllStringFunc(s, headerRedact)
	for _, k := range r.keys {
		s = r.exact(s, k)
	}
	s = r.masked(s)
	s = secret.Redact(s)
	s = reduceHTML(s)
	return capText(s)
}

// headerRedact replaces the value of one headerValue match. A scheme word standing alone
// ("Bearer" followed by a marker, or by nothing) and a value already redacted are left.
func headerRedact(match string) string {
	m := headerValue.Compiled().FindStringSubmatch(match)
	name, sep, scheme, value := m[1], m[2], m[3], m[4]
	if scheme == "" && slices.Contains(authSchemes, strings.ToLower(value)) {
		return match
	}
	if strings.EqualFold(value, "redacted") || strings.HasPrefix(value, "REDACTED:") {
		return match
	}
	return name + sep + scheme + headerMarker
}

// exact removes key from s: anywhere when it is long, as a token of its own when short.
func (r *Redactor) exact(s, key string) string {
	if len(key) >= minKeyForFragments {
		return strings.ReplaceAll(s, key, keyMarker)
	}
	var b strings.Builder
	pos, from := 0, 0
	for {
		i := strings.Index(s[from:], key)
		if i < 0 {
			b.WriteString(s[pos:])
			return b.String()
		}
		i += from
		end := i + len(key)
		if (i > 0 && isWordByte(s[i-1]) && isWordByte(key[0])) || (end < len(s) && isWordByte(s[end]) && isWordByte(key[len(key)-1])) {
			from = i + 1 // inside a longer word: not the key
			continue
		}
		b.WriteString(s[pos:i])
		b.WriteString(keyMarker)
		pos, from = end, end
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// masked removes the masked forms of the keys: around each mask run, the key prefix ending at
// it and the key suffix starting after it, when either is at least minFragment bytes.
func (r *Redactor) masked(s string) string {
	var long []string
	for _, k := range r.keys {
		if len(k) >= minKeyForFragments {
			long = append(long, k)
		}
	}
	if len(long) == 0 {
		return s
	}
	runs := maskRun.Compiled().FindAllStringIndex(s, -1)
	if len(runs) == 0 {
		return s
	}
	var b strings.Builder
	pos := 0
	for _, run := range runs {
		if run[0] < pos {
			continue // inside a span already replaced
		}
		start, end := run[0], run[1]
		for _, k := range long {
			p := prefixBefore(s[pos:run[0]], k)
			q := suffixAfter(s[run[1]:], k)
			if p >= minFragment || q >= minFragment {
				start, end = min(start, run[0]-p), max(end, run[1]+q)
			}
		}
		if start == run[0] && end == run[1] {
			continue
		}
		b.WriteString(s[pos:start])
		b.WriteString(keyMarker)
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// prefixBefore is the length of the longest proper prefix of key that before ends with.
func prefixBefore(before, key string) int {
	for n := min(len(key)-1, len(before)); n > 0; n-- {
		if strings.HasSuffix(before, key[:n]) {
			return n
		}
	}
	return 0
}

// suffixAfter is the length of the longest proper suffix of key that after starts with.
func suffixAfter(after, key string) int {
	for n := min(len(key)-1, len(after)); n > 0; n-- {
		if strings.HasPrefix(after, key[len(key)-n:]) {
			return n
		}
	}
	return 0
}

// capText cuts s to at most MaxText bytes, marker included, on a character boundary.
func capText(s string) string {
	if len(s) <= MaxText {
		return s
	}
	// The widest marker this text can get: the count it shows is at most len(s).
	widest := fmt.Sprintf(" [cut: %d of %d bytes not kept]", len(s), len(s))
	keep := MaxText - len(widest)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(" [cut: %d of %d bytes not kept]", len(s)-keep, len(s))
}
