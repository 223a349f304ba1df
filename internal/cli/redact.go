package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/secret"
)

// Secret scanning of transcripts rein hands over (rein session export and show).
//
// The text is scanned with secret.Scan and every finding is replaced by
// "[REDACTED:rule-id]"; stderr gets a notice naming the rules and counts. The ledger is never
// changed: it is the record of what happened, and redaction applies only to what leaves it.
// A scanner error fails closed: nothing is written and the command exits 4 (blocked).
//
// Not redacted: the --mode json event stream of a live run. It goes to the user's own
// terminal or pipe while the run happens, its consumers need exact tool output (the same
// bytes the model saw and the ledger holds), and it is a stream of deltas that can split a
// secret across events, so per-event redaction would promise more than it can keep.
// Exporting a session is the point where a transcript is made to be shared, and the
// point where it is scanned.

// markdownChunk bounds the pieces a markdown transcript is scanned in (secret.Scan refuses
// more than secret.MaxScanBytes at once); pieces are cut only before a "## " heading, so a
// message is scanned whole.
const markdownChunk = 16 << 20

// redactTranscript returns text with every secret found replaced, and a notice for stderr
// ("" when nothing was found). Escapes hide nothing: secret.Scan sees through JSON string
// escapes (a tool call's arguments in markdown are JSON text), percent-encoding and HTML
// character references. isJSON says text is a JSON document, redacted with secret.RedactJSON
// so that the result stays valid JSON. An error means the text must not be written.
func redactTranscript(text string, isJSON bool) (string, string, error) {
	counts := map[string]int{}
	var out string
	var err error
	if isJSON {
		out, err = redactJSONStrings(text, counts)
	} else {
		out, err = redactMarkdown(text, counts)
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: the secret scan of the transcript failed, so nothing was written (the session ledger is unchanged): %w", ErrBlocked, err)
	}
	return out, redactionNotice(counts), nil
}

func redactMarkdown(text string, counts map[string]int) (string, error) {
	var b strings.Builder
	for len(text) > 0 {
		n := len(text)
		if n > markdownChunk {
			n = markdownChunk
			if i := strings.LastIndex(text[:n], "\n## "); i > 0 {
				n = i + 1
			} else if i := strings.Index(text[n:], "\n## "); i >= 0 {
				n += i + 1
			} else {
				n = len(text)
			}
		}
		piece := text[:n]
		text = text[n:]
		fs, err := secret.Scan(piece)
		if err != nil {
			return "", err
		}
		for _, f := range fs {
			counts[f.RuleID]++
		}
		b.WriteString(secret.RedactFindings(piece, fs))
	}
	return b.String(), nil
}

// redactJSONStrings redacts a JSON document with secret.RedactJSON: every string is scanned
// through its escapes (a tool call's arguments are a JSON string holding JSON) and each
// secret is replaced inside its string, so the result stays valid JSON.
func redactJSONStrings(doc string, counts map[string]int) (string, error) {
	out, fs, err := secret.RedactJSON(doc)
	if err != nil {
		return "", err
	}
	for _, f := range fs {
		counts[f.RuleID]++
	}
	return out, nil
}

// redactionNotice says which rules redacted how many secrets; "" when none did.
func redactionNotice(counts map[string]int) string {
	if len(counts) == 0 {
		return ""
	}
	ids := make([]string, 0, len(counts))
	total := 0
	for id, n := range counts {
		ids = append(ids, id)
		total += n
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s ×%d", id, counts[id])
	}
	noun := "secrets"
	if total == 1 {
		noun = "secret"
	}
	return fmt.Sprintf("redacted %d %s (%s; secret rules %s) from the output; the session ledger is unchanged",
		total, noun, strings.Join(parts, ", "), secret.RuleSetVersion)
}
