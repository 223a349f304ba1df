// Package secret finds secrets in text and redacts them, before the text leaves rein (an
// exported transcript, a run's evidence, a record meant for people).
//
// # Rules
//
// [Scan] finds secrets with a versioned rule set ([RuleSetVersion], [RuleIDs]):
// PEM private keys, AWS access key ids and secret keys, GCP API keys and service-account
// keys, GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab (glpat- and other gl*-
// tokens), Slack tokens and webhooks, Stripe live keys, Anthropic (sk-ant-), OpenAI
// (sk-proj-, sk-svcacct-, sk-admin-, legacy sk-), JWTs, bearer tokens, and high-entropy
// values assigned to secret-like names (password, secret, token, api_key…, entropy ≥ 3.5
// bits per byte, documentation placeholders ignored). Long base64 runs are decoded once and
// scanned with the specific rules. A [Finding] holds the rule, the byte range and a preview
// that shows only the public prefix ("ghp_…[github-token, 40 bytes]"). [Redact] replaces
// each finding with "[REDACTED:rule-id]"; [RedactFindings] does so for findings already
// made.
//
// # Encodings
//
// Escapes hide nothing. [Scan] scans the text as it stands and decoded: JSON string escapes
// (\n \t \r \b \f \" \\ \/ and \uXXXX, surrogate pairs included — so a key after "\n" in a
// tool call's arguments is found although the raw text puts no word boundary before it),
// percent-encoding (%2B) and HTML character references (&#43; &#x2B; &amp; &lt; &gt; &quot;
// &apos;), decoded again as long as that changes something, up to four times (a JSON string
// holding JSON holding JSON). The base64 re-scan runs on every decoded form. A finding made
// in a decoded form is reported at the bytes of the text it came from, and no finding starts
// or ends inside an escape, so replacing it never breaks an escape. [RedactJSON] redacts a JSON
// document: each secret is replaced inside the string that holds it (a finding that runs on
// past a string's end, a PEM key without its END line, is cut at each string it touches),
// so the result is valid JSON. Not decoded: base32, hex, gzip, "+" as a space in a query, named HTML
// references other than those above.
//
// The regular expressions are compiled on first use, not when the program starts.
//
// # Contract
//
// A scanner error ([CodeScanFailed]: text over [MaxScanBytes], an internal failure) means
// the text was not scanned. Callers must refuse to emit it; [Redact] returns a fixed notice
// in place of the text. Errors are *[refusal.Error].
package secret
