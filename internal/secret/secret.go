package secret

import (
	"encoding/base64"
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/refusal"
)

// RuleSetVersion identifies the secret-scanning rule set. It changes whenever a rule is
// added, removed or changed, or the encodings it sees through change, so a recorded scan
// says which rules it applied. 2026.2: JSON string escapes, percent-encoding and HTML
// character references are decoded (see the package doc).
const RuleSetVersion = "2026.2"

// The codes of the scanner's refusals (*[refusal.Error]). Codes are stable strings, never
// renamed once released.
const (
	// CodeSecretFound: text that would leave rein contains a secret.
	CodeSecretFound refusal.Code = "policy.secret_found"
	// CodeScanFailed: the secret scanner failed; the text must not be emitted.
	CodeScanFailed refusal.Code = "policy.scan_failed"
)

// MaxScanBytes is the largest text [Scan] accepts; larger text is an error (fail closed).
const MaxScanBytes = 64 << 20

// Finding is one secret found in a text. It never holds the secret itself.
type Finding struct {
	// RuleID names the rule ("github-token"); a secret found inside base64-encoded text has
	// the rule id prefixed with "base64:".
	RuleID string `json:"ruleId"`
	// Start and End are the byte offsets of the secret in the scanned text; for a secret
	// found through escapes, of all its escaped bytes.
	Start int `json:"start"`
	End   int `json:"end"`
	// Preview shows at most the secret's fixed, public prefix ("ghp_") and its length.
	Preview string `json:"preview"`
}

// secretRule is one detection rule.
type secretRule struct {
	id string
	// keywords: at least one must occur in the lower-cased text for the rule to run.
	keywords []string
	re       *lazyre.Regexp // compiled on first use
	// group is the submatch holding the secret; 0 is the whole match.
	group int
	// minEntropy is the Shannon entropy (bits per byte) the secret must reach.
	minEntropy float64
	// The secret's public, fixed prefix shown in previews: prefix's length when set, else up to
	// and including the first prefixSep when set, else fixedPrefix bytes. (Data, not helper
	// calls: the rule set is laid out by the compiler, not built by a package initializer.)
	prefix      func(secret string) int
	prefixSep   string
	fixedPrefix int
	// ignore reports known non-secrets (documentation example keys…).
	ignore func(secret string) bool
	// find replaces re for rules that need code (PEM blocks).
	find func(text string) [][2]int
}

// prefixOf is the length of secret's public prefix (see secretRule).
func (r *secretRule) prefixOf(secret string) int {
	switch {
	case r.prefix != nil:
		return r.prefix(secret)
	case r.prefixSep != "":
		if i := strings.Index(secret, r.prefixSep); i >= 0 {
			return i + len(r.prefixSep)
		}
		return 0
	}
	return r.fixedPrefix
}

var stopwords = []string{"example", "placeholder", "changeme", "change_me", "your_", "your-", "redacted", "dummy", "sample", "xxxxxxxx", "********", "<", ">", "{{", "}}"}

func hasStopword(s string) bool {
	l := strings.ToLower(s)
	for _, w := range stopwords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

var (
	pemBegin = lazyre.Regexp{Expr: `-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`}
	pemEnd   = lazyre.Regexp{Expr: `-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`}
)

// findPrivateKeys finds PEM private key blocks, from BEGIN to END (or to the end of the key
// material when END is missing). A BEGIN line without at least 32 characters of key
// material after it is prose, not a key.
func findPrivateKeys(text string) [][2]int {
	var out [][2]int
	for _, m := range pemBegin.Compiled().FindAllStringIndex(text, -1) {
		if len(out) > 0 && m[0] < out[len(out)-1][1] {
			continue
		}
		rest := text[m[1]:]
		end := -1
		if e := pemEnd.Compiled().FindStringIndex(rest); e != nil {
			end = m[1] + e[1]
			rest = rest[:e[0]]
		}
		material, stop := 0, len(rest)
		for i := 0; i < len(rest); i++ {
			c := rest[i]
			switch {
			case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/':
				material++
			case c == '=' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\' || c == '"' || c == ':' || c == '-' || c == ',':
			default:
				if end < 0 {
					stop = i
					i = len(rest)
				}
			}
		}
		if material < 32 {
			continue
		}
		if end < 0 {
			end = m[1] + stop
		}
		out = append(out, [2]int{m[0], end})
	}
	return out
}

// secretRules is the rule set; see [RuleSetVersion].
var secretRules = []secretRule{
	{
		id:       "private-key",
		keywords: []string{"private key"},
		find:     findPrivateKeys,
		prefix: func(s string) int {
			if i := strings.Index(s[5:], "-----"); i >= 0 {
				return i + 10
			}
			return 0
		},
	},
	{
		id:          "aws-access-key-id",
		keywords:    []string{"akia", "asia", "abia", "acca", "a3t"},
		re:          &lazyre.Regexp{Expr: `\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})\b`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 4,
		ignore:      func(s string) bool { return strings.HasSuffix(s, "EXAMPLE") },
	},
	{
		id:          "aws-secret-access-key",
		keywords:    []string{"secret"},
		re:          &lazyre.Regexp{Expr: `(?i)(?:aws)?_?secret_?access_?key["']?\s*(?::=|=>|[:=])\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`},
		group:       1,
		minEntropy:  3.5,
		fixedPrefix: 0,
		ignore:      func(s string) bool { return strings.HasSuffix(s, "EXAMPLEKEY") },
	},
	{
		id:          "gcp-api-key",
		keywords:    []string{"aiza"},
		re:          &lazyre.Regexp{Expr: `\b(AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)`},
		group:       1,
		minEntropy:  3.5,
		fixedPrefix: 4,
	},
	{
		id:          "gcp-service-account-key",
		keywords:    []string{"service_account"},
		re:          &lazyre.Regexp{Expr: `"private_key_id"\s*:\s*"([0-9a-f]{40})"`},
		group:       1,
		fixedPrefix: 0,
	},
	{
		id:          "github-token",
		keywords:    []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		re:          &lazyre.Regexp{Expr: `\b((?:ghp|gho|ghu|ghs|ghr)_[0-9A-Za-z]{36,255})\b`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 4,
	},
	{
		id:          "github-fine-grained-pat",
		keywords:    []string{"github_pat_"},
		re:          &lazyre.Regexp{Expr: `\b(github_pat_[0-9A-Za-z]{22}_[0-9A-Za-z]{59})\b`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 11,
	},
	{
		id:         "gitlab-token",
		keywords:   []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-"},
		re:         &lazyre.Regexp{Expr: `\b((?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt)-[0-9A-Za-z_-]{20,255})`},
		group:      1,
		minEntropy: 3.0,
		prefixSep:  "-",
	},
	{
		id:          "slack-token",
		keywords:    []string{"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"},
		re:          &lazyre.Regexp{Expr: `\b(xox[baprs]-[0-9A-Za-z-]{10,250})`},
		group:       1,
		minEntropy:  2.5,
		fixedPrefix: 5,
	},
	{
		id:        "slack-webhook-url",
		keywords:  []string{"hooks.slack.com"},
		re:        &lazyre.Regexp{Expr: `(?i)(https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,})`},
		group:     1,
		prefixSep: ".com/",
	},
	{
		id:          "stripe-live-key",
		keywords:    []string{"sk_live_", "rk_live_"},
		re:          &lazyre.Regexp{Expr: `\b((?:sk|rk)_live_[0-9A-Za-z]{20,247})\b`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 8,
	},
	{
		id:          "anthropic-api-key",
		keywords:    []string{"sk-ant-"},
		re:          &lazyre.Regexp{Expr: `\b(sk-ant-[0-9A-Za-z_-]{32,})`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 7,
	},
	{
		id:         "openai-api-key",
		keywords:   []string{"sk-"},
		re:         &lazyre.Regexp{Expr: `\b(sk-(?:proj|svcacct|admin)-[0-9A-Za-z_-]{20,}|sk-[0-9A-Za-z]{20}T3BlbkFJ[0-9A-Za-z]{20}\b|sk-[0-9A-Za-z]{48}\b)`},
		group:      1,
		minEntropy: 3.0,
		prefixSep:  "-",
	},
	{
		id:          "jwt",
		keywords:    []string{"eyj"},
		re:          &lazyre.Regexp{Expr: `\b(eyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*)`},
		group:       1,
		minEntropy:  3.0,
		fixedPrefix: 3,
	},
	{
		id:          "http-bearer-token",
		keywords:    []string{"bearer"},
		re:          &lazyre.Regexp{Expr: `(?i)\bbearer\s+([0-9A-Za-z_.~+/=-]{16,})`},
		group:       1,
		minEntropy:  3.5,
		fixedPrefix: 0,
		ignore:      hasStopword,
	},
	{
		id:          "generic-secret",
		keywords:    []string{"pass", "pwd", "secret", "token", "key", "credential"},
		re:          &lazyre.Regexp{Expr: `(?i)[a-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api[_.-]?key|access[_.-]?key|auth[_.-]?key|private[_.-]?key|client[_.-]?secret|credentials?)[a-z0-9_.-]*["']?\s*(?::=|=>|[:=])\s*["'` + "`" + `]?([0-9A-Za-z_+/=.~!@#%^&*-]{8,200})`},
		group:       1,
		minEntropy:  3.5,
		fixedPrefix: 0,
		ignore:      hasStopword,
	},
}

// RuleIDs lists the ids of the secret-scanning rules.
func RuleIDs() []string {
	ids := make([]string, len(secretRules))
	for i, r := range secretRules {
		ids[i] = r.id
	}
	return ids
}

// Scan finds secrets in text. Findings are ordered by position and never hold the secret.
//
// Contract: an error means the text was not (fully) scanned. Callers must then refuse to
// emit the text (fail closed): wrap the error, whose code is [CodeScanFailed], and stop.
func Scan(text string) (findings []Finding, err error) {
	if len(text) > MaxScanBytes {
		return nil, refusal.Errorf(CodeScanFailed, "the text is %d bytes, more than the %d the secret scanner accepts; it must not be emitted: split it or leave it out", len(text), MaxScanBytes)
	}
	defer func() {
		if r := recover(); r != nil {
			findings, err = nil, refusal.Errorf(CodeScanFailed, "the secret scanner failed (%v); the text must not be emitted", r)
		}
	}()
	return scanViews(text), nil
}

// scanViews scans text and each of its decoded views (see decode.go) with every rule and the
// base64 re-scan, and maps the findings back to text.
func scanViews(text string) []Finding {
	vs := views(text)
	var findings []Finding
	for k := range vs {
		fs := scanRules(vs[k].text, false)
		fs = append(fs, scanBase64(vs[k].text)...)
		for _, f := range fs {
			for j := k; j >= 1; j-- {
				f.Start, f.End = vs[j].srcStart(f.Start), vs[j].srcEnd(f.End)
			}
			findings = append(findings, f)
		}
	}
	if len(vs) > 1 && len(findings) > 0 {
		widen(findings, escapeSpans(vs))
	}
	sort.Slice(findings, func(i, j int) bool {
		if findings[i].Start != findings[j].Start {
			return findings[i].Start < findings[j].Start
		}
		return findings[i].RuleID < findings[j].RuleID
	})
	return dedupe(findings)
}

func scanRules(text string, specificOnly bool) []Finding {
	lower := strings.ToLower(text)
	var out []Finding
	for i := range secretRules {
		r := &secretRules[i]
		if specificOnly && (r.id == "generic-secret" || r.id == "http-bearer-token") {
			continue
		}
		if !containsAny(lower, r.keywords) {
			continue
		}
		var spans [][2]int
		if r.find != nil {
			spans = r.find(text)
		} else {
			for _, m := range r.re.Compiled().FindAllStringSubmatchIndex(text, -1) {
				s, e := m[2*r.group], m[2*r.group+1]
				if s >= 0 {
					spans = append(spans, [2]int{s, e})
				}
			}
		}
		for _, sp := range spans {
			secret := text[sp[0]:sp[1]]
			if r.ignore != nil && r.ignore(secret) {
				continue
			}
			if r.minEntropy > 0 && entropy(secret) < r.minEntropy {
				continue
			}
			out = append(out, Finding{RuleID: r.id, Start: sp[0], End: sp[1], Preview: preview(r, secret)})
		}
	}
	return out
}

// base64Runs finds what `[A-Za-z0-9+/_-]{40,}={0,2}` matches — every run of at least 40
// base64 (standard or URL-safe) digits, with up to two "=" after it — in one pass: the
// regular expression took most of a scan's time.
func base64Runs(text string) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		if !isBase64Digit(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isBase64Digit(text[j]) {
			j++
		}
		if j-i >= 40 {
			end := j
			for end < len(text) && end-j < 2 && text[end] == '=' {
				end++
			}
			out = append(out, [2]int{i, end})
		}
		i = j
	}
	return out
}

func isBase64Digit(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// scanBase64 decodes long base64 runs once and scans the result with the specific rules; a
// finding covers the whole encoded run.
func scanBase64(text string) []Finding {
	var out []Finding
	budget := MaxScanBytes
	for _, m := range base64Runs(text) {
		run := text[m[0]:m[1]]
		var dec []byte
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if dec, err = enc.DecodeString(run); err == nil {
				break
			}
		}
		if err != nil || !utf8.Valid(dec) || len(dec) > budget {
			continue
		}
		budget -= len(dec)
		if id := specificRule(string(dec)); id != "" {
			out = append(out, Finding{RuleID: "base64:" + id, Start: m[0], End: m[1], Preview: fmt.Sprintf("[base64 %s, %d bytes]", id, m[1]-m[0])})
		}
	}
	return out
}

// specificRule names the first specific rule that finds a secret in decoded base64 text or
// in its decoded views (a base64 JSON document with an escaped key in it); "" when none does.
func specificRule(text string) string {
	for _, v := range views(text) {
		if fs := scanRules(v.text, true); len(fs) > 0 {
			return fs[0].RuleID
		}
	}
	return ""
}

// dedupe merges findings of one rule that overlap (the same secret found in the text and in
// a decoded view of it) into the first; fs is ordered by start.
func dedupe(fs []Finding) []Finding {
	var out []Finding
	last := map[string]int{} // rule id -> index in out of its latest finding
	for _, f := range fs {
		if i, ok := last[f.RuleID]; ok && f.Start < out[i].End {
			out[i].End = max(out[i].End, f.End)
			continue
		}
		last[f.RuleID] = len(out)
		out = append(out, f)
	}
	return out
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// preview shows the public prefix of a secret, never more than a quarter of it.
func preview(r *secretRule, secret string) string {
	n := r.prefixOf(secret)
	if n > len(secret)/4 && r.id != "private-key" {
		n = len(secret) / 4
	}
	return fmt.Sprintf("%s…[%s, %d bytes]", secret[:n], r.id, len(secret))
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// redactFailed replaces text whose scan failed.
const redactFailed = "[REDACTED: secret scan failed; text withheld]"

// Redact returns text with every secret [Scan] finds replaced by "[REDACTED:rule-id]".
// When the scan fails it returns a fixed notice instead of the text (fail closed).
func Redact(text string) string {
	fs, err := Scan(text)
	if err != nil {
		return redactFailed
	}
	return RedactFindings(text, fs)
}

// RedactFindings replaces each finding of a successful [Scan] of text with
// "[REDACTED:rule-id]" (overlapping findings become one, named after the first). fs must
// come from scanning exactly this text, ordered as Scan orders them.
func RedactFindings(text string, fs []Finding) string {
	if len(fs) == 0 {
		return text
	}
	var b strings.Builder
	pos := 0
	for i := 0; i < len(fs); {
		start, end, id := fs[i].Start, fs[i].End, fs[i].RuleID
		j := i + 1
		for j < len(fs) && fs[j].Start < end {
			end = max(end, fs[j].End)
			j++
		}
		if start < pos {
			start = pos
		}
		b.WriteString(text[pos:start])
		b.WriteString("[REDACTED:" + id + "]")
		pos = end
		i = j
	}
	b.WriteString(text[pos:])
	return b.String()
}
