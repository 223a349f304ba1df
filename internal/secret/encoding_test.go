package secret

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// encodedSecrets are secrets of several rules, each with the rule that must find it.
func encodedSecrets() []struct{ rule, secret string } {
	return []struct{ rule, secret string }{
		{"aws-access-key-id", p("AK", "IA") + randFrom(upper32, 16)},
		{"github-token", p("gh", "p_") + randFrom(alnum, 36)},
		{"slack-token", p("xo", "xb-") + "123456789012-" + randFrom(alnum, 24)},
		{"anthropic-api-key", p("sk", "-ant-", "api03-") + randFrom(urlSafe, 60)},
		{"stripe-live-key", p("sk", "_live_") + randFrom(alnum, 24)},
		{"jwt", jwtToken()},
	}
}

// uEscape writes every byte of s as \u00XX.
func uEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

// decodeJSONString decodes the contents of a JSON string.
func decodeJSONString(t *testing.T, contents string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal([]byte(`"`+contents+`"`), &s); err != nil {
		t.Fatalf("%q is not the contents of a JSON string: %v", contents, err)
	}
	return s
}

// TestScanSeesThroughJSONEscapes: a secret after (or written in) any JSON string escape is
// found, its finding covers the escaped bytes exactly, and redacting it leaves valid JSON
// whose string holds the marker where the secret was.
func TestScanSeesThroughJSONEscapes(t *testing.T) {
	for _, s := range encodedSecrets() {
		forms := map[string]struct{ before, secret, after string }{
			`after \n`:             {`line\n`, s.secret, `\nmore`},
			`after \t`:             {`a\t`, s.secret, ``},
			`after \r`:             {`a\r`, s.secret, `\r`},
			`after \b`:             {`a\b`, s.secret, ``},
			`after \f`:             {`a\f`, s.secret, ``},
			`after \"`:             {`say \"`, s.secret, `\" now`},
			`after \\`:             {`C:\\`, s.secret, `\\x`},
			`after \/`:             {`a\/`, s.secret, `\/b`},
			`after \u000a`:         {`x\u000a`, s.secret, ``},
			`after surrogate pair`: {`x\ud83d\ude00`, s.secret, `\ud83d\ude00`},
			`first byte \u`:        {`x\n`, `\u` + fmt.Sprintf("%04x", s.secret[0]) + s.secret[1:], `\n`},
			`all \u`:               {`x\n`, uEscape(s.secret), `\n`},
		}
		for name, f := range forms {
			t.Run(s.rule+" "+name, func(t *testing.T) {
				contents := f.before + f.secret + f.after
				text := `{"content":"` + contents + `","n":1}`
				if decoded := decodeJSONString(t, f.secret); decoded != s.secret {
					t.Fatalf("fixture: %q decodes to %q", f.secret, decoded)
				}
				fs, err := Scan(text)
				if err != nil {
					t.Fatal(err)
				}
				var hit *Finding
				for i := range fs {
					if fs[i].RuleID == s.rule {
						hit = &fs[i]
					}
					if strings.Contains(fs[i].Preview, s.secret[len(s.secret)/2:]) {
						t.Errorf("preview %q leaks the secret", fs[i].Preview)
					}
				}
				if hit == nil {
					t.Fatalf("rule %s did not fire on %q: %+v", s.rule, text, fs)
				}
				if got, want := text[hit.Start:hit.End], f.secret; got != want {
					t.Errorf("finding covers %q, want the escaped secret %q", got, want)
				}
				red := Redact(text)
				var back struct {
					Content string `json:"content"`
					N       int    `json:"n"`
				}
				if err := json.Unmarshal([]byte(red), &back); err != nil {
					t.Fatalf("redacted text is not valid JSON: %v\n%s", err, red)
				}
				want := decodeJSONString(t, f.before) + "[REDACTED:" + s.rule + "]" + decodeJSONString(t, f.after)
				if back.Content != want || back.N != 1 {
					t.Errorf("redacted content = %q, want %q", back.Content, want)
				}
			})
		}
	}
}

// TestScanSeesThroughNestedJSON: a JSON export holds a tool call's arguments as a JSON string
// of JSON; the secret after the inner "\n" is found through both, and both documents stay
// valid after redaction.
func TestScanSeesThroughNestedJSON(t *testing.T) {
	for _, s := range encodedSecrets() {
		args, _ := json.Marshal(map[string]string{"path": "a.txt", "content": "line\n" + s.secret})
		cmd, _ := json.Marshal(map[string]string{"command": `echo '{"a":"x\n` + s.secret + `"}'`})
		for name, inner := range map[string]string{"arguments": string(args), "command with JSON": string(cmd)} {
			outer, _ := json.Marshal(map[string]any{"message": map[string]string{"arguments": inner}})
			for _, text := range []string{string(outer), inner} {
				red := Redact(text)
				if strings.Contains(red, s.secret) || strings.Contains(red, s.secret[4:20]) {
					t.Errorf("%s %s: secret left in %s", s.rule, name, red)
				}
				if !json.Valid([]byte(red)) {
					t.Fatalf("%s %s: redacted text is not valid JSON: %s", s.rule, name, red)
				}
				if !strings.Contains(red, "[REDACTED:"+s.rule+"]") {
					t.Errorf("%s %s: no marker in %s", s.rule, name, red)
				}
			}
			var back struct{ Message struct{ Arguments string } }
			if err := json.Unmarshal([]byte(Redact(string(outer))), &back); err != nil || !json.Valid([]byte(back.Message.Arguments)) {
				t.Errorf("%s %s: the arguments are no longer JSON: %q %v", s.rule, name, back.Message.Arguments, err)
			}
		}
	}
}

// TestScanSeesThroughURLAndHTMLEncoding: percent-encoding and HTML character references hide
// nothing either.
func TestScanSeesThroughURLAndHTMLEncoding(t *testing.T) {
	awsSecret := randFrom(b64, 38) + "+/"
	aws := p("AK", "IA") + randFrom(upper32, 16)
	tok := p("gh", "p_") + randFrom(alnum, 36)
	for name, c := range map[string]struct{ text, rule, secret string }{
		"query value":        {"https://example.org/cb?" + p("aws_secret", "_access_key=") + url.QueryEscape(awsSecret) + "&x=1", "aws-secret-access-key", awsSecret},
		"percent first byte": {"https://example.org/x?id=1%0A%41" + aws[1:] + "&y", "aws-access-key-id", aws},
		"html decimal":       {"<p>key&#58;&#65;" + aws[1:] + "</p>", "aws-access-key-id", aws},
		"html hex":           {"<p>&#x67;" + tok[1:] + "</p>", "github-token", tok},
		"html named":         {`<input value="a&amp;` + tok + `&quot;">`, "github-token", tok},
	} {
		fs, err := Scan(c.text)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range fs {
			found = found || f.RuleID == c.rule
		}
		red := Redact(c.text)
		if !found || strings.Contains(red, c.secret[4:]) || strings.Contains(red, url.QueryEscape(c.secret)) {
			t.Errorf("%s: findings %+v, redacted %q", name, fs, red)
		}
	}
}

// TestBase64ThroughEscapes: the base64 re-scan runs on the decoded views too: a run broken
// by "\/" (as some JSON encoders write "/"), one right after "\n", and base64 of JSON with an
// escaped key in it.
func TestBase64ThroughEscapes(t *testing.T) {
	// "?" is 0x3f: where its byte lines up with a base64 digit's last six bits, the digit is "/".
	enc := base64.StdEncoding.EncodeToString([]byte(`{"t":"` + p("gh", "p_") + randFrom(alnum, 36) + `","q":"???"}`))
	if !strings.Contains(enc, "/") {
		t.Fatalf("fixture: %q holds no /", enc)
	}
	escapedInside := base64.StdEncoding.EncodeToString([]byte(`{"t":"x\n` + p("AK", "IA") + randFrom(upper32, 16) + `"}`))
	// A run that starts at the "b" of "\b": base64 of text that starts with "m" starts with "b".
	fromB := base64.StdEncoding.EncodeToString([]byte(`m{"t":"` + p("gh", "p_") + randFrom(alnum, 36) + `"}`))
	if fromB[0] != 'b' {
		t.Fatalf("fixture: %q", fromB)
	}
	for name, c := range map[string]struct{ text, run string }{
		`run starts inside \b`: {`{"data":"\` + fromB + `"}`, `\` + fromB},
		`slashes escaped`:      {`{"data":"` + strings.ReplaceAll(enc, "/", `\/`) + `"}`, strings.ReplaceAll(enc, "/", `\/`)},
		`after \n`:             {`{"data":"x\n` + enc + `"}`, enc},
		`escape inside base64`: {`{"data":"` + escapedInside + `"}`, escapedInside},
	} {
		fs, err := Scan(c.text)
		if err != nil {
			t.Fatal(err)
		}
		var hit *Finding
		for i := range fs {
			if strings.HasPrefix(fs[i].RuleID, "base64:") {
				hit = &fs[i]
			}
		}
		if hit == nil {
			t.Errorf("%s: no base64 finding in %+v", name, fs)
			continue
		}
		if got := c.text[hit.Start:hit.End]; got != c.run {
			t.Errorf("%s: finding covers %q, want %q", name, got, c.run)
		}
		if red := Redact(c.text); !json.Valid([]byte(red)) || strings.Contains(red, enc[10:30]) && name != `escape inside base64` {
			t.Errorf("%s: redacted %q", name, red)
		}
	}
}

// TestDecodingAddsNoFalsePositives: text full of escapes, percent signs and ampersands that
// hold no secret yields nothing, and odd or cut escapes neither panic nor change anything.
func TestDecodingAddsNoFalsePositives(t *testing.T) {
	for _, text := range []string{
		`{"content":"line one\nline two\t\"quoted\" C:\\Users\\new\\table \u00e9\ud83d\ude00 \/path"}`,
		`100% of 50%; %zz %4 %`, `a & b &amp c &#; &#x; &#xZZ; &#0; &#99999999; &unknown;`,
		`\`, `\u12`, `\u123`, `\ud800`, `\ud800\u0041`, `\udc00x`, `\x41\q`, `%`, `&`, `&#`,
		"https://example.org/search?q=a%20b%2Bc&lang=en&amp;x",
		`password = "\u0063hangeme-please"`,
	} {
		fs, err := Scan(text)
		if err != nil || len(fs) != 0 {
			t.Errorf("Scan(%q) = %+v, %v", text, fs, err)
		}
		if Redact(text) != text {
			t.Errorf("Redact changed %q", text)
		}
	}
}

// TestRedactJSON: a JSON document comes back valid with every secret replaced inside its
// string — one split across a key and its value, an escaped one, one in nested JSON — and a
// document without secrets comes back byte for byte.
func TestRedactJSON(t *testing.T) {
	tok := p("gh", "p_") + randFrom(alnum, 36)
	pass := randFrom(alnum, 24)
	inner, _ := json.Marshal(map[string]string{"content": "x\n" + tok})
	doc := `{"db_` + `password": "` + pass + `", "args": ` + quote(t, string(inner)) +
		`, "u": "\u0067` + tok[1:] + `", "list": [1, "` + tok + `", {"k": null}]}`
	out, fs, err := RedactJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("not valid JSON: %s", out)
	}
	for _, s := range []string{tok, tok[4:24], pass} {
		if strings.Contains(out, s) {
			t.Errorf("%q left in %s", s, out)
		}
	}
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.RuleID]++
	}
	if counts["github-token"] != 3 || counts["generic-secret"] != 1 {
		t.Errorf("findings %v", counts)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	if back["db_password"] != "[REDACTED:generic-secret]" || back["u"] != "[REDACTED:github-token]" || !json.Valid([]byte(back["args"].(string))) {
		t.Errorf("redacted = %v", back)
	}
	clean := `{"a": "b\n", "c": [1, 2, "\u003cd\u003e"], "d": "100% &amp; C:\\new"}`
	if got, fs, err := RedactJSON(clean); err != nil || got != clean || len(fs) != 0 {
		t.Errorf("clean document: %q %v %v", got, fs, err)
	}
	if _, _, err := RedactJSON(`{"a": "` + tok + `"`); !isCode(err, CodeScanFailed) {
		t.Errorf("invalid JSON: %v", err)
	}
}

// TestRedactJSONInPieces: a document larger than a piece is scanned in pieces cut between
// tokens, at line breaks or, on one long line, after a string; secrets in every piece are
// found and the result is valid JSON.
func TestRedactJSONInPieces(t *testing.T) {
	defer func(n int) { jsonChunk = n }(jsonChunk)
	jsonChunk = 256
	var toks []string
	var lines []string
	for i := range 12 {
		tok := p("gh", "p_") + randFrom(alnum, 36)
		toks = append(toks, tok)
		lines = append(lines, fmt.Sprintf(`"k%d": "%s line\n%s"`, i, strings.Repeat("w", 40+i*13), tok))
	}
	for name, sep := range map[string]string{"indented": ",\n  ", "one line": ", "} {
		doc := "{" + strings.Join(lines, sep) + "}"
		out, fs, err := RedactJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid([]byte(out)) || len(fs) != len(toks) {
			t.Errorf("%s: %d findings, valid %v: %s", name, len(fs), json.Valid([]byte(out)), out)
		}
		for _, tok := range toks {
			if strings.Contains(out, tok[4:]) {
				t.Errorf("%s: secret left", name)
			}
		}
	}
}

func quote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzRedactKeepsJSONValid: whatever a JSON string holds, redacting the document leaves it
// valid JSON and without the secret placed in it.
func FuzzRedactKeepsJSONValid(f *testing.F) {
	for _, seed := range []string{"line\n", `\u0041`, "é😀", `C:\new`, "%41&#65;", "\"quoted\"", "-----BEGIN"} {
		f.Add(seed)
	}
	tok := p("gh", "p_") + randFrom(alnum, 36)
	f.Fuzz(func(t *testing.T, s string) {
		inner, _ := json.Marshal(map[string]string{"content": s + " " + tok + " " + s})
		doc, _ := json.Marshal(map[string]string{"arguments": string(inner), "plain": s})
		for _, red := range []string{Redact(string(doc)), must(RedactJSON(string(doc)))} {
			if !json.Valid([]byte(red)) {
				t.Fatalf("not valid JSON: %s", red)
			}
			if strings.Contains(red, tok) {
				t.Fatalf("secret left: %s", red)
			}
		}
	})
}

func must(s string, _ []Finding, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// FuzzRedactJSONRaw: RedactJSON keeps any valid JSON document valid, whatever escapes it
// is written with.
func FuzzRedactJSONRaw(f *testing.F) {
	tok := p("gh", "p_") + randFrom(alnum, 36)
	for _, seed := range []string{`{"a":"x\n` + tok + `"}`, `["\u0067` + tok[1:] + `", 1, null]`, `{"p` + `assword": "` + randFrom(alnum, 20) + `"}`,
		`["` + p("-----BEGIN RSA PRIV", "ATE KEY-----") + `\n` + randFrom(b64, 64) + `", "x", "y"]`, `{"d":"\\` + base64.StdEncoding.EncodeToString([]byte("m"+tok)) + `"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		out, _, err := RedactJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("not valid JSON: %s", out)
		}
	})
}

// BenchmarkScanJSONTranscript scans a 1 MiB JSON export-like document full of escapes (each
// decoded view is one more pass over the text).
func BenchmarkScanJSONTranscript(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		inner, _ := json.Marshal(map[string]string{"path": "src/main.go", "content": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
		line, _ := json.Marshal(map[string]any{"role": "assistant", "text": "I will edit the file & run it.", "arguments": string(inner)})
		sb.Write(line)
		sb.WriteByte('\n')
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Scan(text); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBase64RunsMatchesTheExpression: the hand-written run finder finds what the regular
// expression it replaced finds.
func TestBase64RunsMatchesTheExpression(t *testing.T) {
	re := regexp.MustCompile(`[A-Za-z0-9+/_-]{40,}={0,2}`)
	texts := []string{"", strings.Repeat("a", 39), strings.Repeat("a", 40), strings.Repeat("a", 40) + "===x", "x " + strings.Repeat("Ab+/", 11) + "= y" + strings.Repeat("-_", 30) + "==",
		strings.Repeat("a", 39) + "=" + strings.Repeat("b", 41) + "=="}
	for range 200 {
		texts = append(texts, randFrom(b64+"_-= .\n", 40+fixtureRand.IntN(400)))
	}
	for _, text := range texts {
		var want [][2]int
		for _, m := range re.FindAllStringIndex(text, -1) {
			want = append(want, [2]int{m[0], m[1]})
		}
		if got := base64Runs(text); !slices.Equal(got, want) {
			t.Fatalf("base64Runs(%q) = %v, want %v", text, got, want)
		}
	}
}
