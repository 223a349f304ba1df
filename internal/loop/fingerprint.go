package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/reinhq/rein/internal/lazyre"
)

// maxSignatureLines bounds the lines a fingerprint is computed from.
const maxSignatureLines = 8

var (
	failingTest = lazyre.Regexp{Expr: `--- FAIL: (\S+)`}
	located     = lazyre.Regexp{Expr: `\.\w+:\d+(:\d+)?: `}
	errorLine   = lazyre.Regexp{Expr: `(?i)\b(error|fail(ed|ure)?|panic|assert(ion)?|expected|undefined|cannot|exception|traceback)\b`}
	timestamp   = lazyre.Regexp{Expr: `\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?|\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`}
	pathToken   = lazyre.Regexp{Expr: `(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+([\w.-]+)`}
	lineNumber  = lazyre.Regexp{Expr: `:\d+(:\d+)?\b`}
	duration    = lazyre.Regexp{Expr: `\(?\b\d+(\.\d+)?(ns|µs|us|ms|s|m)\)?`}
	hexAddr     = lazyre.Regexp{Expr: `\b0x[0-9a-fA-F]+\b`}
	spaces      = lazyre.Regexp{Expr: `\s+`}
)

// Fingerprint names a failure's root cause independent of where and when it happened: the
// check's id and the normalized signature of its output — the failing test names first,
// then error lines (or, with neither, the output's last lines), with paths reduced to their
// base names, and line numbers, timestamps, durations and addresses stripped.
func Fingerprint(id string, exit int, output string) (fp string, signature []string) {
	var tests, errs, tail []string
	for _, l := range strings.Split(output, "\n") {
		if m := failingTest.FindStringSubmatch(l); m != nil {
			tests = append(tests, "FAIL "+m[1])
			continue
		}
		n := normalizeLine(l)
		if n == "" {
			continue
		}
		if errorLine.MatchString(n) || located.MatchString(l) {
			errs = append(errs, n)
		}
		tail = append(tail, n)
	}
	signature = append(tests, errs...)
	if len(signature) == 0 {
		signature = tail[max(0, len(tail)-3):]
	}
	signature = dedupe(signature)
	if len(signature) > maxSignatureLines {
		signature = signature[:maxSignatureLines]
	}
	if len(signature) == 0 {
		signature = []string{"(no output)"}
	}
	h := sha256.Sum256([]byte(id + "\x00" + strings.Join(signature, "\n")))
	return "rc:" + hex.EncodeToString(h[:8]), signature
}

func normalizeLine(l string) string {
	l = timestamp.ReplaceAllString(l, "")
	l = pathToken.ReplaceAllString(l, "$1")
	l = lineNumber.ReplaceAllString(l, "")
	l = duration.ReplaceAllString(l, "")
	l = hexAddr.ReplaceAllString(l, "0x")
	return strings.TrimSpace(spaces.ReplaceAllString(l, " "))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
