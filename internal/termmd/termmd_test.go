package termmd

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

var plainTheme = Theme{Marks: true}

// TestRender: markdown in, the rows a terminal without colour shows, one row a line.
func TestRender(t *testing.T) {
	for _, c := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"paragraph wraps at spaces", "one two three four five six", 10, "one two\nthree four\nfive six"},
		{"soft breaks join, blank lines part", "one\ntwo\n\nthree", 20, "one two\n\nthree"},
		{"hard break", "one  \ntwo\\\nthree", 20, "one\ntwo\nthree"},
		{"long word is cut", "abcdefghijkl", 5, "abcde\nfghij\nkl"},
		{"wide runes count two cells", "日本語の文章です", 6, "日本語\nの文章\nです"},
		{"headings keep their level", "# One\n### Three ###\nSetext\n---", 20, "# One\n\n### Three\n\n## Setext"},
		{"markers stay without colour", "a **b** *c* `d` ~~e~~ _f_", 40, "a **b** *c* `d` ~~e~~ _f_"},
		{"unmatched markers are text", "2 * 3 * 4 and snake_case_name and `open", 60, "2 * 3 * 4 and snake_case_name and `open"},
		{"escapes", `\*not em\* and \` + "`x`", 40, "*not em* and `x`"},
		{"code span is not parsed", "`**a**` and ``a ` b``", 40, "`**a**` and ``a ` b``"},
		{"link shows its URL", "see [the docs](https://x.io/d \"title\") and <https://y.io>", 60, "see the docs (https://x.io/d) and https://y.io"},
		{"link whose text is its URL", "[https://x.io](https://x.io)", 40, "https://x.io"},
		{"not a link", "[a] (b) and [c](", 40, "[a] (b) and [c]("},
		{"bullets nest", "- one\n- two\n  - inner\n    continued\n- three", 40, "• one\n• two\n  • inner continued\n• three"},
		{"item text wraps under itself", "- alpha beta gamma", 10, "• alpha\n  beta\n  gamma"},
		{"numbered lists count from their start", "3. a\n3. b\n3. c", 20, "3. a\n4. b\n5. c"},
		{"lists of two kinds are apart", "- a\n1. b", 20, "• a\n\n1. b"},
		{"item with a code block", "1. run\n\n   ```\n   make\n   ```\n2. done", 30, "1. run\n\n     make\n2. done"},
		{"quote", "> quoted **text**\nlazy\n>\n> - item", 30, "│ quoted **text** lazy\n│\n│ • item"},
		{"nested quote", "> a\n>> b", 30, "│ a\n│\n│ │ b"},
		{"rule", "a\n\n***\n\nb", 5, "a\n\n─────\n\nb"},
		{"fenced code is kept and cut, not reflowed", "```go\nif x {\n    y()  \n}\n\nlong line here\n```\nafter", 12, "  if x {\n      y()\n  }\n\n  long line\n  here\n\nafter"},
		{"tilde fence and unclosed fence", "~~~\n``` inside\n", 20, "  ``` inside"},
		{"table aligns columns", "| name | n |\n|:----|---:|\n| a | 1 |\n| bcd | 22 |", 30, "name │  n\n─────┼───\na    │  1\nbcd  │ 22"},
		{"table centres", "a|b\n:-:|-\nxyz|q", 30, " a  │ b\n────┼──\nxyz │ q"},
		{"table too wide falls back to its source", "| aaaa | bbbb |\n|---|---|\n| c | d |", 10, "| aaaa | b\nbbb |\n|---|---|\n| c | d |"},
		{"table cells take inline markup", "| `a` | **c** |\n|---|---|\n| 1 | 2 |", 30, "`a` │ **c**\n────┼──────\n1   │ 2"},
		{"pipe without delimiter row is text", "a | b\nc | d", 20, "a | b c | d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(Render(c.in, c.width, plainTheme), "\n")
			if got != c.want {
				t.Errorf("Render(%q, %d):\n%s\nwant:\n%s", c.in, c.width, got, c.want)
			}
		})
	}
}

// TestRenderStyles: with a theme, markers go and each kind of text passes its function;
// styled runs are whole (no escape sequence inside a styled word).
func TestRenderStyles(t *testing.T) {
	tag := func(name string) func(string) string {
		return func(s string) string { return "<" + name + ">" + s + "</>" }
	}
	th := Theme{Heading: tag("h"), Strong: tag("b"), Emph: tag("i"), Strike: tag("s"), Code: tag("c"), CodeBlock: tag("pre"),
		Link: tag("a"), URL: tag("u"), Quote: tag("q"), Rule: tag("hr"), Marker: tag("m")}
	for _, c := range []struct{ in, want string }{
		{"a **bold words** b", "a <b>bold words</> b"},
		{"***both***", "<b><i>both</></>"},
		{"`x` ~~y~~ *z*", "<c>x</> <s>y</> <i>z</>"},
		{"## Title *x*", "<h>## Title</> <h><i>x</></>"},
		{"[t](https://u)", "<a>t</> <u>(https://u)</>"},
		{"- a", "<m>•</> a"},
		{"> a", "<q>│</> a"},
		{"```\ncode\n```", "  <pre>code</>"},
	} {
		if got := strings.Join(Render(c.in, 40, th), "\n"); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRuleFillsTheWidth: a rule is as wide as the row, in its style (escape sequences take
// no cells).
func TestRuleFillsTheWidth(t *testing.T) {
	th := Theme{Rule: func(s string) string { return "\x1b[2m" + s + "\x1b[m" }}
	if got, want := Render("---", 7, th), []string{"\x1b[2m───────\x1b[m"}; strings.Join(got, "\n") != want[0] {
		t.Errorf("Render(---) = %q, want %q", got, want)
	}
}

// FuzzRender: whatever the text and width, Render returns and no row is wider than the
// width.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# h\n\n**a** *b* `c` [d](e) <https://f>\n\n- x\n  1. y\n\n> q\n\n```\ncode\n```\n\n|a|b|\n|-|-|\n|c|d|",
		"日本語 ***x*** ~~y~~ \\` `` ` ``", "- - -\n* * *\n1) a\n10000000000. b", ">>>>>>>>>>>>>>>>>>>>>>>> deep", "   - a\n     - b\n       - c",
		"[a](b) ![i](u) [x [y](z)", "a|b\n-|-\n|||", "\u0301\u200d👩‍👩‍👧 ☺️", "```\n\t\ttabs\n```",
	} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, src string, width int) {
		if !utf8.ValidString(src) || width < 1 || width > 300 {
			t.Skip()
		}
		for _, th := range []Theme{plainTheme, {Strong: func(s string) string { return "\x1b[1m" + s + "\x1b[m" }, Marker: func(s string) string { return "\x1b[33m" + s + "\x1b[m" }}} {
			for i, row := range Render(src, width, th) {
				if w := ansi.StringWidth(row); w > width {
					t.Fatalf("row %d is %d cells wide, more than %d: %q", i, w, width, row)
				}
			}
		}
	})
}

// BenchmarkRender renders answers of n paragraphs, lists, code blocks and tables: time per
// byte stays flat as n grows (rendering is linear in the text's length), including text
// full of unmatched delimiters.
func BenchmarkRender(b *testing.B) {
	unit := "## Step\n\nSome **bold** text, `code`, *emphasis* and a [link](https://example.com/a) in a paragraph that wraps.\n\n" +
		"- one\n  - two *x\n1. three_\n\n> quoted\n\n```go\nfunc f() {}\n```\n\n| a | b |\n|---|---|\n| c | d |\n\n" +
		"2 * 3 * 4 ** 5 __ [ ] ( ` `` [x] (y\n\n"
	for _, n := range []int{10, 100, 1000} {
		src := strings.Repeat(unit, n)
		b.Run(fmt.Sprintf("units=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Render(src, 78, plainTheme)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/byte")
		})
	}
}
