package secret

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/refusal"
)

// Fixtures are generated: no secret-looking string appears literally in this file, so the
// repository itself does not trip secret scanners (TestRepositorySourcesAreClean checks it
// with this scanner).

var fixtureRand = rand.New(rand.NewPCG(7, 11))

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64     = alnum + "+/"
	urlSafe = alnum + "_-"
)

func randFrom(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[fixtureRand.IntN(len(set))]
	}
	return string(b)
}

// p joins pieces, so that prefixes never appear whole in the source.
func p(parts ...string) string { return strings.Join(parts, "") }

func pemKey(kind string, lines int) string {
	var b strings.Builder
	b.WriteString(p("-----BEGIN ", kind, " PRIV", "ATE KEY-----\n"))
	for range lines {
		b.WriteString(randFrom(b64, 64) + "\n")
	}
	b.WriteString(p("-----END ", kind, " PRIV", "ATE KEY-----"))
	return b.String()
}

func jwtToken() string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+randFrom(alnum, 12)+`","iat":1516239022}`)) + "." + randFrom(urlSafe, 43)
}

type secretCase struct {
	name   string
	text   string // the text scanned
	secret string // the secret inside it; "" for a negative case
	rule   string
}

func secretCases() []secretCase {
	c := func(name, rule, before, secret, after string) secretCase {
		return secretCase{name: name, rule: rule, text: before + secret + after, secret: secret}
	}
	neg := func(name, text string) secretCase { return secretCase{name: name, text: text} }
	awsID := p("AK", "IA") + randFrom(upper32, 16)
	awsSecret := randFrom(b64, 40)
	saKey := strings.ReplaceAll(pemKey("", 12), "\n", `\n`)
	saKey = strings.Replace(saKey, "BEGIN  ", "BEGIN ", 1)
	saKey = strings.Replace(saKey, "END  ", "END ", 1)
	saKeyID := hex.EncodeToString([]byte(randFrom(alnum, 20)))
	saJSON := `{"type": "service_account", "project_id": "demo", "private_key_id": "` + saKeyID + `", "private_key": "` + saKey + `", "client_email": "x@demo.iam.gserviceaccount.com"}`
	ghp := p("gh", "p_") + randFrom(alnum, 36)
	cases := []secretCase{
		// Private keys.
		c("rsa pem", "private-key", "key:\n", pemKey("RSA", 10), "\nend"),
		c("pkcs8 pem", "private-key", "", strings.Replace(pemKey(" ", 8), "BEGIN  ", "BEGIN ", 1), ""),
		c("openssh pem", "private-key", "x ", pemKey("OPENSSH", 6), " y"),
		c("ec pem", "private-key", "", pemKey("EC", 3), ""),
		c("pgp block", "private-key", "", p("-----BEGIN PGP PRIV", "ATE KEY BLOCK-----\n\n")+randFrom(b64, 200)+p("\n-----END PGP PRIV", "ATE KEY BLOCK-----"), ""),
		c("pem without end", "private-key", "", p("-----BEGIN RSA PRIV", "ATE KEY-----\n")+randFrom(b64, 64)+"\n"+randFrom(b64, 30), "\n"),
		neg("public key", p("-----BEGIN PUBLIC", " KEY-----\n")+randFrom(b64, 64)+"\n-----END PUBLIC KEY-----"),
		neg("pem marker in prose", p("look for -----BEGIN RSA PRIV", "ATE KEY----- lines in the file.")),
		// AWS.
		c("aws key id", "aws-access-key-id", "aws_access_key_id = ", awsID, "\n"),
		c("aws temp key id", "aws-access-key-id", `"`, p("AS", "IA")+randFrom(upper32, 16), `"`),
		neg("aws documented example", p("AKIA", "IOSFODNN7", "EXAMPLE")),
		neg("aws key id low entropy", p("AK", "IA", strings.Repeat("A", 16))),
		neg("aws key id too long", p("AK", "IA")+randFrom(upper32, 20)),
		neg("aws key id lower case", p("AK", "IA")+strings.ToLower(randFrom(upper32, 16))),
		c("aws secret key", "aws-secret-access-key", p("aws_secret", "_access_key = "), awsSecret, "\n"),
		c("aws secret key json", "aws-secret-access-key", p(`{"SecretAccess`, `Key": "`), randFrom(b64, 40), `"}`),
		neg("aws secret key placeholder", p("aws_secret", "_access_key = ${AWS_SECRET}")),
		neg("aws secret key documented example", p("aws_secret", "_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "EXAMPLEKEY")),
		// GCP.
		c("gcp api key", "gcp-api-key", "key=", p("AI", "za")+randFrom(urlSafe, 35), "&"),
		neg("gcp api key short", p("AI", "za")+randFrom(urlSafe, 20)),
		c("gcp service account key id", "gcp-service-account-key", `..."private_key_id": "`, saKeyID, `"...`+` "type": "service_account"`),
		neg("key id without service account", `"private_key_id": "`+saKeyID+`"`),
		// GitHub.
		c("github classic pat", "github-token", "token ", ghp, "\n"),
		c("github oauth", "github-token", "", p("gh", "o_")+randFrom(alnum, 36), ""),
		c("github user-to-server", "github-token", "", p("gh", "u_")+randFrom(alnum, 36), ""),
		c("github server-to-server", "github-token", "", p("gh", "s_")+randFrom(alnum, 36), ""),
		c("github refresh", "github-token", "", p("gh", "r_")+randFrom(alnum, 36), ""),
		c("github fine-grained", "github-fine-grained-pat", "GH=", p("github", "_pat_")+randFrom(alnum, 22)+"_"+randFrom(alnum, 59), ""),
		neg("github short", p("gh", "p_")+randFrom(alnum, 10)),
		neg("github unknown prefix", p("gh", "x_")+randFrom(alnum, 36)),
		// GitLab.
		c("gitlab pat", "gitlab-token", "", p("gl", "pat-")+randFrom(urlSafe, 20), " "),
		c("gitlab deploy token", "gitlab-token", "", p("gl", "dt-")+randFrom(urlSafe, 24), ""),
		neg("gitlab short", p("gl", "pat-")+randFrom(alnum, 10)),
		// Slack.
		c("slack bot", "slack-token", "", p("xo", "xb-")+"123456789012-1234567890123-"+randFrom(alnum, 24), ""),
		c("slack user", "slack-token", "", p("xo", "xp-")+randFrom(alnum, 30), ""),
		neg("slack unknown", p("xo", "xz-")+randFrom(alnum, 30)),
		c("slack webhook", "slack-webhook-url", "POST ", p("https://hooks.", "slack.com/services/T")+randFrom(upper32, 8)+"/B"+randFrom(upper32, 8)+"/"+randFrom(alnum, 24), "\n"),
		neg("slack webhook short", p("https://hooks.", "slack.com/services/abc")),
		// Stripe.
		c("stripe secret", "stripe-live-key", "", p("sk", "_live_")+randFrom(alnum, 24), ""),
		c("stripe restricted", "stripe-live-key", "", p("rk", "_live_")+randFrom(alnum, 24), ""),
		neg("stripe test key", p("sk", "_test_")+randFrom(alnum, 24)),
		// Anthropic and OpenAI.
		c("anthropic", "anthropic-api-key", "ANTHROPIC_KEY=", p("sk", "-ant-", "api03-")+randFrom(urlSafe, 93)+"AA", "\n"),
		neg("anthropic short", p("sk", "-ant-")+randFrom(alnum, 10)),
		c("openai project", "openai-api-key", "", p("sk", "-proj-")+randFrom(urlSafe, 120), ""),
		c("openai service account", "openai-api-key", "", p("sk", "-svcacct-")+randFrom(urlSafe, 60), ""),
		c("openai legacy marker", "openai-api-key", "", p("sk", "-")+randFrom(alnum, 20)+p("T3Blbk", "FJ")+randFrom(alnum, 20), ""),
		c("openai legacy", "openai-api-key", "", p("sk", "-")+randFrom(alnum, 48), ""),
		neg("openai short", p("sk", "-")+randFrom(alnum, 20)),
		// JWT and bearer tokens.
		c("jwt", "jwt", "cookie: session=", jwtToken(), ";"),
		neg("jwt too short", p("ey", "J.ey", "J.abc")),
		c("bearer", "http-bearer-token", "Authorization: Bearer ", randFrom(urlSafe, 40), "\r\n"),
		neg("bearer word", "use a Bearer token in the header"),
		// Generic assignments.
		c("generic password", "generic-secret", `db_password = "`, randFrom(alnum, 20), `"`),
		c("generic api key yaml", "generic-secret", "api_key: ", randFrom(alnum+"+/", 32), "\n"),
		c("generic env", "generic-secret", "SERVICE_TOKEN=", randFrom(alnum, 24), "\n"),
		c("generic client secret", "generic-secret", `'client_secret' => '`, randFrom(alnum, 30), `'`),
		c("generic go", "generic-secret", `Secret := "`, randFrom(alnum, 28), `"`),
		neg("generic placeholder", `password = "changeme-please"`),
		neg("generic variable", `password: ${DB_PASSWORD}`),
		neg("generic low entropy", `password = "aaaaaaaaaaaaaaaa"`),
		neg("generic word", `token = "abcdefgh"`),
		neg("generic function call", `password = os.Getenv("DB_PASSWORD")`),
		neg("secret-like name without value", "the password field is required"),
		// Encoded.
		c("base64 github token", "base64:github-token", "data: ", base64.StdEncoding.EncodeToString([]byte(`{"t":"`+p("gh", "p_")+randFrom(alnum, 36)+`"}`)), "\n"),
		neg("base64 of prose", base64.StdEncoding.EncodeToString([]byte("an ordinary sentence that is long enough to be decoded"))),
		neg("plain code", "func main() { fmt.Println(\"hello\") }\nkey := cache.Key(id)\n"),
	}
	cases = append(cases, secretCase{name: "service account json", text: saJSON, secret: saKey, rule: "private-key"})
	return cases
}

func TestSecretRules(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range secretCases() {
		if c.secret != "" {
			covered[strings.TrimPrefix(c.rule, "base64:")] = true
		}
	}
	for _, id := range RuleIDs() {
		if !covered[id] {
			t.Errorf("rule %s has no positive case", id)
		}
	}
	for _, c := range secretCases() {
		t.Run(c.name, func(t *testing.T) {
			fs, err := Scan(c.text)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				if c.secret != "" && strings.Contains(f.Preview, c.secret) || len(f.Preview) > 0 && f.End-f.Start > 16 && strings.Contains(f.Preview, c.text[f.Start+len(f.Preview)/2:f.End]) {
					t.Errorf("preview %q leaks the secret", f.Preview)
				}
				if f.Start < 0 || f.End > len(c.text) || f.Start >= f.End {
					t.Errorf("bad range %+v", f)
				}
			}
			red := Redact(c.text)
			if c.secret == "" {
				if len(fs) != 0 {
					t.Errorf("false positive: %+v", fs)
				}
				if red != c.text {
					t.Errorf("Redact changed clean text: %q", red)
				}
				return
			}
			var hit *Finding
			for i := range fs {
				if fs[i].RuleID == c.rule {
					hit = &fs[i]
				}
			}
			if hit == nil {
				t.Fatalf("rule %s did not fire; findings %+v", c.rule, fs)
			}
			if got := c.text[hit.Start:hit.End]; !strings.Contains(got, c.secret) && !strings.Contains(c.secret, got) {
				t.Errorf("range %d:%d is %q, not the secret", hit.Start, hit.End, got)
			}
			if strings.Contains(red, c.secret) {
				t.Errorf("Redact left the secret: %q", red)
			}
			// Not even a long piece of it survives.
			if n := len(c.secret); n >= 24 && strings.Contains(red, c.secret[n/3:n/3+12]) {
				t.Errorf("Redact left part of the secret: %q", red)
			}
			if !strings.Contains(red, "[REDACTED:") {
				t.Errorf("Redact = %q", red)
			}
		})
	}
}

func TestRedactKeepsSurroundings(t *testing.T) {
	tok := p("gh", "p_") + randFrom(alnum, 36)
	key := p("sk", "-ant-") + randFrom(urlSafe, 40)
	in := "a " + tok + " b " + key + " c"
	want := "a [REDACTED:github-token] b [REDACTED:anthropic-api-key] c"
	if got := Redact(in); got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	// Overlapping findings (a PEM key inside a service-account JSON, a token inside its own
	// base64 run) are redacted once, with nothing of either left.
	pem := pemKey("RSA", 4)
	in = `{"password": "` + randFrom(alnum, 20) + `", "k": "` + pem + `"}`
	got := Redact(in)
	if strings.Contains(got, pem[40:60]) || strings.Count(got, "[REDACTED:") < 2 {
		t.Errorf("Redact = %q", got)
	}
	fs, err := Scan(in)
	if err != nil || len(fs) < 2 || fs[0].Start > fs[1].Start {
		t.Errorf("Scan = %+v, %v (want ordered findings)", fs, err)
	}
}

func TestScanFailsClosed(t *testing.T) {
	big := strings.Repeat("a", MaxScanBytes+1)
	fs, err := Scan(big)
	if !isCode(err, CodeScanFailed) || fs != nil {
		t.Errorf("Scan(oversize) = %v, %v", len(fs), err)
	}
	if got := Redact(big); got != redactFailed {
		t.Errorf("Redact(oversize) = %.40q", got)
	}
	if RuleSetVersion == "" {
		t.Error("no rule set version")
	}
}

// TestRepositorySourcesAreClean scans this package's own files: the rule definitions, the
// tests and the documentation must not look like secrets.
func TestRepositorySourcesAreClean(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := Scan(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range fs {
			t.Errorf("%s: %s at %d: %q", f, x.RuleID, x.Start, string(b)[max(0, x.Start-20):min(len(b), x.End+5)])
		}
	}
}
func TestRedactFindingsMatchesRedact(t *testing.T) {
	text := "token: " + "ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36] + " and more"
	fs, err := Scan(text)
	if err != nil || len(fs) == 0 {
		t.Fatalf("Scan = %v, %v", fs, err)
	}
	if got, want := RedactFindings(text, fs), Redact(text); got != want || strings.Contains(got, "ghp_") {
		t.Errorf("RedactFindings = %q, Redact = %q", got, want)
	}
	if RedactFindings("plain", nil) != "plain" {
		t.Error("text without findings changed")
	}
}

func isCode(err error, c refusal.Code) bool {
	got, ok := refusal.CodeOf(err)
	return ok && got == c
}
