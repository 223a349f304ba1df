package system

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/gitx"
)

// commandKeys are the last parts of git configuration keys whose values name a program, a
// hooks directory or a file git reads (filter.<name>.clean, core.hooksPath, include.path…);
// commandSections are sections every key of which does (alias.<name>, pager.<cmd>).
var (
	commandKeys = []string{"hookspath", "fsmonitor", "sshcommand", "editor", "pager", "askpass", "excludesfile",
		"attributesfile", "gitproxy", "external", "program", "clean", "smudge", "process", "command", "textconv",
		"driver", "helper", "path", "templatedir", "template", "cmd", "defaultkeycommand"}
	commandSections = []string{"alias", "pager"}
)

// gitProtected returns, relative to the workspace ws, what the git configuration of ws's
// repository would make the host's git run or read that lies inside ws, so the sandbox keeps
// it read-only: configuration files (an include.path pointing into the work tree), the
// core.hooksPath directory (whether it exists or not), and programs and files named by the
// keys above (as the whole value or its first word). git resolves such relative paths from
// the top of the work tree. Outside a repository, or where git cannot read the configuration
// (a host git would fail as well), it returns nothing.
func gitProtected(ws string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	g := gitx.Runner{Dir: ws}
	top, err := g.TopLevel(ctx)
	if err != nil {
		return nil
	}
	out, err := g.Run(ctx, "config", "--show-origin", "-z", "--list")
	if err != nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	resolve := func(p string) string {
		switch {
		case p == "":
			return ""
		case strings.HasPrefix(p, "~/") && home != "":
			p = filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			p = filepath.Join(top, p)
		}
		return filepath.Clean(p)
	}
	var found []string
	add := func(p string, evenMissing bool) {
		if p == "" || p == ws || !strings.HasPrefix(p, ws+string(filepath.Separator)) {
			return
		}
		if _, err := os.Lstat(p); err != nil && !evenMissing {
			return
		}
		rel, _ := filepath.Rel(ws, p)
		found = append(found, rel)
	}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin, entry := fields[i], fields[i+1]
		file, ok := strings.CutPrefix(origin, "file:")
		if !ok {
			continue // command line: rein's own overrides
		}
		add(resolve(file), false)
		key, value, _ := strings.Cut(entry, "\n")
		key = strings.ToLower(key)
		section, _, _ := strings.Cut(key, ".")
		last := key[strings.LastIndexByte(key, '.')+1:]
		if !slices.Contains(commandKeys, last) && !slices.Contains(commandSections, section) {
			continue
		}
		if last == "hookspath" {
			add(resolve(value), true)
			continue
		}
		add(resolve(value), false)
		if words := strings.Fields(strings.TrimPrefix(value, "!")); len(words) > 0 {
			add(resolve(words[0]), false)
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}
