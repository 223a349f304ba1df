package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/secret"
)

// TestRedactTranscriptFailsClosed: text the scanner refuses is not returned at all, and the
// error maps to exit 4.
func TestRedactTranscriptFailsClosed(t *testing.T) {
	huge := strings.Repeat("a", secret.MaxScanBytes+1)
	for name, c := range map[string]struct {
		text   string
		isJSON bool
	}{
		"markdown": {"# Session\n\n" + huge, false},
		"json":     {`{"text":"` + huge + `"}`, true},
	} {
		out, notice, err := redactTranscript(c.text, c.isJSON)
		if err == nil || out != "" || notice != "" {
			t.Errorf("%s: out %d bytes, notice %q, err %v", name, len(out), notice, err)
			continue
		}
		if code, _ := refusal.CodeOf(err); code != secret.CodeScanFailed || !errors.Is(err, ErrBlocked) || ExitCode(err) != ExitBlocked {
			t.Errorf("%s: err = %v (exit %d)", name, err, ExitCode(err))
		}
		if !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("%s: message: %v", name, err)
		}
	}
}

// TestRedactJSONStrings: secrets hidden behind JSON escapes are found, the result stays valid
// JSON, and documents without secrets come back byte for byte.
func TestRedactJSONStrings(t *testing.T) {
	tok := "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYZq9R"
	doc := map[string]any{
		"plain":   "nothing here <b>&amp;</b>",
		"escaped": strings.ReplaceAll(tok, "p", `\u0070`),
		"args":    `{"command":"export API_TOKEN=` + tok + `"}`,
		"nested":  map[string]any{"details": []any{"x", tok}},
		"quoted":  `a "quote" and ` + tok + "\n\ttab",
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// Put real escapes in: "\u0070" inside a JSON string is the letter p.
	text := strings.ReplaceAll(string(raw), `\\u0070`, `\u0070`)
	counts := map[string]int{}
	out, err := redactJSONStrings(text, counts)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("invalid JSON:\n%s", out)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	flat, _ := json.Marshal(back)
	if strings.Contains(string(flat), tok) || strings.Contains(out, "aB3dE5fG7hJ9") {
		t.Errorf("secret left:\n%s", out)
	}
	if counts["github-token"] != 4 {
		t.Errorf("counts = %v", counts)
	}
	if back["plain"] != "nothing here <b>&amp;</b>" || !strings.HasSuffix(back["quoted"].(string), "[REDACTED:github-token]\n\ttab") {
		t.Errorf("round trip: %v", back)
	}
	clean := `{"a": "b\n", "c": [1, 2, "\u003cd\u003e"]}`
	if got, err := redactJSONStrings(clean, map[string]int{}); err != nil || got != clean {
		t.Errorf("clean document changed: %q %v", got, err)
	}
	if n := redactionNotice(map[string]int{"github-token": 2, "jwt": 1}); !strings.Contains(n, "redacted 3 secrets (github-token ×2, jwt ×1;") {
		t.Errorf("notice = %q", n)
	}
}
