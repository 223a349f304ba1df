package redact

import (
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"html"
	"regexp"
	"strings"
)

// maxTitle bounds the title kept of an HTML page.
const maxTitle = 200

// The expressions are compiled on first use, not at package load.
var (
	htmlStart = lazyre.Regexp{Expr: `(?i)<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>]`}
	htmlTitle = lazyre.Regexp{Expr: `(?is)<title[^>]*>(.*?)</title>`}
	htmlH1    = lazyre.Regexp{Expr: `(?is)<h1[^>]*>(.*?)</h1>`}
	htmlTag   = lazyre.Regexp{Expr: `(?s)<[^>]*>`}
	spaces    = lazyre.Regexp{Expr: `\s+`}
)

// reduceHTML replaces an HTML page in s (and everything after its start) by its title, or
// its first heading, and its size; text before the page is kept. Text without HTML comes
// back unchanged.
func reduceHTML(s string) string {
	loc := htmlStart.Compiled().FindStringIndex(s)
	if loc == nil {
		return s
	}
	page := s[loc[0]:]
	title := ""
	for _, re := range []*regexp.Regexp{htmlTitle.Compiled(), htmlH1.Compiled()} {
		if m := re.FindStringSubmatch(page); m != nil {
			title = html.UnescapeString(htmlTag.Compiled().ReplaceAllString(m[1], ""))
			// No angle brackets survive, so the reduced text is never taken for a page again.
			title = strings.NewReplacer("<", "", ">", "").Replace(title)
			title = strings.TrimSpace(spaces.Compiled().ReplaceAllString(title, " "))
			if title != "" {
				break
			}
		}
	}
	if len(title) > maxTitle {
		title = strings.ToValidUTF8(title[:maxTitle], "") + " (title cut)"
	}
	out := fmt.Sprintf("an HTML page of %d bytes", len(page))
	if title != "" {
		out = fmt.Sprintf("an HTML page of %d bytes titled %q", len(page), title)
	}
	if prefix := strings.TrimSpace(s[:loc[0]]); prefix != "" {
		out = prefix + " " + out
	}
	return out
}
