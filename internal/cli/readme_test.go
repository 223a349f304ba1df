package cli

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestREADMEListsEveryCommand walks rein's command tree and fails when a command's full path
// ("rein run clarify") or one of its flags is missing from the README's CLI reference, so the
// reference cannot fall behind the commands.
func TestREADMEListsEveryCommand(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ref := section(t, string(data), "## CLI reference")
	root := newRoot(&env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		seen[c.CommandPath()] = true
		if !regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(c.CommandPath()) + `([^\w-]|$)`).MatchString(ref) {
			t.Errorf("README's CLI reference does not list %q", c.CommandPath())
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if !regexp.MustCompile(`(^|[^\w-])--` + regexp.QuoteMeta(f.Name) + `([^\w-]|$)`).MatchString(ref) {
				t.Errorf("README's CLI reference does not mention --%s of %q", f.Name, c.CommandPath())
			}
			if f.Shorthand != "" && !regexp.MustCompile(`(^|[^\w-])-`+regexp.QuoteMeta(f.Shorthand)+`([^\w-]|$)`).MatchString(ref) {
				t.Errorf("README's CLI reference does not mention -%s of %q", f.Shorthand, c.CommandPath())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, p := range []string{"rein run clarify", "rein session export", "rein completion bash", "rein help"} {
		if !seen[p] {
			t.Errorf("the walk never reached %q; the tree is not what this test expects", p)
		}
	}
}

// section returns the text of the README section starting at heading, up to the next heading of
// the same level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n"+heading[:strings.Index(heading, " ")+1]); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
