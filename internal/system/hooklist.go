package system

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/hooks/command"
)

// hookFile is the hooks one file configured.
type hookFile struct {
	path string
	cfg  command.Config
}

// HookEntry is one configured hook, with the file that configured it.
type HookEntry struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	// Command is the command as written (a plugin's with ${CLAUDE_PLUGIN_ROOT} unexpanded).
	Command string `json:"command"`
	// Name is where it was configured: "claude-project:PreToolUse[0].hooks[0]",
	// "plugin:NAME:SessionStart[0].hooks[0]".
	Name   string `json:"name"`
	Source string `json:"source"`
	// Runs is false for a hook accepted and never run: an event rein never fires, a handler
	// type other than "command", a PowerShell hook.
	Runs bool `json:"runs"`
}

// hookEntries lists the hooks of s's files, in the order they were read, each event's in
// event order.
func (s Settings) hookEntries() []HookEntry {
	var out []HookEntry
	for _, f := range s.hookFiles {
		events := make([]string, 0, len(f.cfg))
		for e := range f.cfg {
			events = append(events, e)
		}
		slices.Sort(events)
		for _, e := range events {
			for _, g := range f.cfg[e] {
				for _, h := range g.Hooks {
					cmd := h.Command
					if len(h.Args) > 0 {
						cmd = strings.Join(append([]string{h.Command}, h.Args...), " ")
					}
					out = append(out, HookEntry{Event: e, Matcher: g.Matcher, Command: cmd, Name: h.Name(), Source: f.path,
						Runs: !h.Skipped() && slices.Contains(command.Events, e)})
				}
			}
		}
	}
	return out
}

// HooksInForce lists the hooks a run in o.Dir would load — rein's settings, Claude Code's,
// and plugins' — with trusted saying whether the project's own files count.
func HooksInForce(o Options, trusted bool) ([]HookEntry, error) {
	global, err := ReadSettings(filepath.Join(o.Home, SettingsFile), true)
	if err != nil {
		return nil, err
	}
	dir, err := absReal(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	root := contextpack.ProjectRoot(dir)
	s := global
	if trusted && !sameFile(filepath.Dir(projectSettingsPath(root)), o.Home) {
		local, err := ReadSettings(projectSettingsPath(root), false)
		if err != nil {
			return nil, err
		}
		s = s.merge(local)
	}
	s, _ = withClaudeSettings(o, s, root, trusted)
	s, installed := enabledInstalled(o, s, root)
	src := contextpack.Load(contextpack.Inputs{Dir: o.Dir, Home: o.Home, UserHome: userHomeDir(), ProjectTrusted: trusted,
		GateContextFiles: global.gateContextFiles()})
	s, _, _ = withPlugins(o, s, installed, &contextpack.Assembly{Skills: src.Skills, PluginDirs: src.PluginDirs})
	return s.hookEntries(), nil
}
