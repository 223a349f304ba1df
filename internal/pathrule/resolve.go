package pathrule

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/tool"
)

// Resolve turns a path as a tool or command receives it into a workspace-relative path (""
// when outside the workspace or unknown) and an absolute path ("" when unknown), both
// slash-separated and clean. dir is the absolute workspace directory in slash form ("" when
// there is none: then only relative paths resolve, and only relatively). cwd is the
// directory a command runs in, relative to the workspace or absolute ("" is the root).
//
// Like the file tools, it turns unusual spaces into spaces, drops a leading "@" and expands
// "~" to the home directory.
func Resolve(dir, target, cwd string) (rel, abs string) {
	target = PlainSpaces(target)
	target = strings.TrimPrefix(strings.TrimSpace(target), "@")
	if t := target; t == "~" || strings.HasPrefix(t, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			target = filepath.Join(home, strings.TrimPrefix(t, "~"))
		}
	}
	target = filepath.ToSlash(target)
	if target == "" {
		target = "."
	}
	if !path.IsAbs(target) && cwd != "" {
		target = path.Join(cwd, target)
	}
	if path.IsAbs(target) {
		abs = path.Clean(target)
		if dir != "" {
			ws := &tool.Workspace{Dir: filepath.FromSlash(dir)}
			if r, err := ws.Rel(filepath.FromSlash(abs)); err == nil {
				rel = filepath.ToSlash(r)
			}
		}
		return rel, abs
	}
	c := path.Clean(target)
	if c == ".." || strings.HasPrefix(c, "../") {
		if dir != "" {
			abs = path.Join(dir, c)
		}
		return "", abs
	}
	if dir != "" {
		abs = path.Join(dir, c)
	}
	return c, abs
}

// PlainSpaces turns the unusual space characters a model may write into a path (no-break,
// en/em, thin, ideographic…) into plain spaces; the file tools and the rules resolve paths
// the same way.
func PlainSpaces(p string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u00A0', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
			'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, p)
}
