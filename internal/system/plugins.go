package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/strictjson"
)

// Claude Code plugins: a plugin directory holds .claude-plugin/plugin.json (optional: its
// "name", and "hooks" as a path, a list of paths or the hooks object inline) and
// hooks/hooks.json ({"description": …, "hooks": {…}}). rein loads the hooks of two kinds of
// plugins:
//
//   - installed plugins, enabled by "enabledPlugins" ("name@marketplace": true) in Claude
//     Code's settings files (the user's always, the project's when it is trusted): their
//     directory is the installPath that <claude dir>/plugins/installed_plugins.json records,
//     else the newest version under <claude dir>/plugins/cache/<marketplace>/<name>/; it
//     must lie inside <claude dir>/plugins;
//   - plugins laid out inside a skills directory (.rein/skills, .agents/skills,
//     .claude/skills, $REIN_HOME/skills, ~/.agents/skills, ~/.claude/skills), with skills or
//     hooks only: the directories the skill index's walk met holding a manifest or a hooks
//     file (contextpack's PluginDirs), never through a symbolic link and never .claude
//     itself, their hook files resolving inside the plugin — so a project's lie in the trees
//     the trust gate digests, and load only when it is trusted, like its skills.
//
// The skills of installed plugins load too, through the skill index, named
// "NAMESPACE:SKILL" as Claude Code names plugin skills (contextpack.Inputs.Plugins); those
// of a plugin inside a skills directory load as that directory's skills, under their own
// names.
//
// Their commands run with CLAUDE_PLUGIN_ROOT set to the plugin directory and
// CLAUDE_PLUGIN_DATA to its persistent data directory (Plugin.Data: where Claude Code keeps
// it, so a plugin's state is one whichever of the two runs it), "${CLAUDE_PLUGIN_ROOT}" and
// "${CLAUDE_PLUGIN_DATA}" in a command or its arguments replaced by them.
const (
	pluginManifest  = ".claude-plugin/plugin.json"
	pluginHooksFile = "hooks/hooks.json"
	installedFile   = "installed_plugins.json"
	// ScopePlugin labels a plugin's hooks: "plugin:NAME:PreToolUse[0].hooks[0]".
	ScopePlugin = "plugin"
)

// Plugin is one Claude Code plugin whose hooks a run loads.
type Plugin struct {
	// Name is the plugin's id: "name@marketplace" for an installed plugin, else the manifest's
	// name or the directory's.
	Name string `json:"name"`
	// Namespace prefixes its skills' names ("NAMESPACE:SKILL"): the manifest's name, else the
	// id's name part (the directory's for a plugin inside a skills directory).
	Namespace string `json:"namespace,omitempty"`
	// Dir is the plugin directory (CLAUDE_PLUGIN_ROOT).
	Dir string `json:"dir"`
	// From says how it was found: the settings file that enabled it, or a skills directory.
	From string `json:"from"`
	// HookFiles are the files its hooks came from (plugin.json for inline hooks).
	HookFiles []string `json:"hookFiles,omitempty"`
	// nested says it was found in a skills directory: its hook files must lie inside it,
	// symbolic links resolved, so the trust digest of that directory covers them.
	nested bool
	// Data is its persistent data directory (CLAUDE_PLUGIN_DATA), as Claude Code places it:
	// <claude dir>/plugins/data/<id>, the id's characters other than letters, digits, "_"
	// and "-" turned into "-"; created when one of its hooks first runs. "" when no Claude
	// Code directory is known.
	Data string `json:"data,omitempty"`
}

// pluginDataDir is the data directory of the plugin id under the Claude Code directory cfg
// ("" when cfg is): formatter@acme → <cfg>/plugins/data/formatter-acme.
func pluginDataDir(cfg, id string) string {
	if cfg == "" || id == "" {
		return ""
	}
	safe := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, id)
	return filepath.Join(cfg, "plugins", "data", safe)
}

// claudeConfigDir is ~/.claude ($CLAUDE_CONFIG_DIR when set); "" when no home is known.
func claudeConfigDir(getenv func(string) string) string {
	if p := claudeUserSettingsPath(getenv); p != "" {
		return filepath.Dir(p)
	}
	return ""
}

// enabledInstalled returns s and the installed plugins it enables (see installedPlugins),
// what is wrong with them added to its warnings. It is the one discovery of installed
// plugins: a run passes what it returns both to the skill index (pluginSkills) and to
// withPlugins for their hooks.
func enabledInstalled(o Options, s Settings, root string) (Settings, []Plugin) {
	warn := func(format string, args ...any) { s.warnings = append(s.warnings, fmt.Sprintf(format, args...)) }
	return s, installedPlugins(claudeConfigDir(o.Getenv), root, s.enabledPlugins, warn)
}

// pluginSkills are the installed plugins as the skill index takes them: namespace and
// directory.
func pluginSkills(installed []Plugin) []contextpack.Plugin {
	var out []contextpack.Plugin
	for _, p := range installed {
		out = append(out, contextpack.Plugin{Name: p.Namespace, Dir: p.Dir})
	}
	return out
}

// withPlugins adds the hooks of the run's plugins to s: installed (from enabledInstalled) and
// the plugins holding the skills of asm (nil: none). It returns s, the plugins and their hook
// files as settings sources. A disableAllHooks in a Claude Code settings file turns plugin
// hooks off too, as in Claude Code.
func withPlugins(o Options, s Settings, installed []Plugin, asm *contextpack.Assembly) (Settings, []Plugin, []SettingsSource) {
	var plugins []Plugin
	warn := func(format string, args ...any) { s.warnings = append(s.warnings, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	add := func(p Plugin) {
		if real, err := filepath.EvalSymlinks(p.Dir); err == nil {
			p.Dir = real
		}
		if !seen[p.Dir] {
			seen[p.Dir] = true
			plugins = append(plugins, p)
		}
	}
	for _, p := range installed {
		add(p)
	}
	if asm != nil {
		for _, dir := range asm.PluginDirs {
			if !seen[dir] {
				add(Plugin{Name: pluginName(dir, warn), Dir: dir, From: "found in a skills directory", nested: true})
			}
		}
	}
	var sources []SettingsSource
	var configs []command.Config
	for i := range plugins {
		p := &plugins[i]
		p.Data = pluginDataDir(claudeConfigDir(o.Getenv), p.Name)
		cfg, files := pluginHooks(p, warn)
		p.HookFiles = files
		for _, f := range files {
			sources = append(sources, SettingsSource{Path: f, Scope: ScopePlugin + ":" + p.Name, State: "loaded"})
		}
		if len(cfg) > 0 {
			configs = append(configs, cfg)
			s.hookFiles = append(s.hookFiles, hookFile{path: strings.Join(files, ", "), cfg: cfg})
		}
	}
	if len(configs) == 0 {
		return s, plugins, sources
	}
	if s.disableClaudeHooks {
		warn("disableAllHooks is set in a Claude Code settings file: the hooks of plugins do not run")
		for i := range sources {
			sources[i].State = "disabled"
		}
		return s, plugins, sources
	}
	s.Hooks = command.Merge(append([]command.Config{s.Hooks}, configs...)...)
	return s, plugins, sources
}

// manifest is the part of a plugin.json rein reads.
type manifest struct {
	Name  string          `json:"name"`
	Hooks json.RawMessage `json:"hooks"`
}

// readManifest reads dir's plugin.json leniently; ok is false when there is none or it is
// unreadable (warned).
func readManifest(dir string, warn func(string, ...any)) (m manifest, ok bool) {
	path := filepath.Join(dir, pluginManifest)
	data, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false
	}
	if err == nil {
		err = strictjson.UnmarshalLoose(data, &m)
	}
	if err != nil {
		warn("%s: skipped: %v", path, err)
		return manifest{}, false
	}
	return m, true
}

// pluginName is the manifest's name, else the directory's.
func pluginName(dir string, warn func(string, ...any)) string {
	if m, ok := readManifest(dir, warn); ok && m.Name != "" {
		return m.Name
	}
	return filepath.Base(dir)
}

// pluginHooks reads the hooks of p: hooks/hooks.json, then what plugin.json's "hooks" names
// (paths inside the plugin, or the hooks object inline). Problems are warnings; the hooks
// that are right load.
func pluginHooks(p *Plugin, warn func(string, ...any)) (command.Config, []string) {
	var files []string
	var out []command.Config
	scope := ScopePlugin + ":" + p.Name
	load := func(path string, raw json.RawMessage, wrapped bool) {
		cfg, ok := parsePluginHooks(path, raw, wrapped, warn)
		if !ok {
			return
		}
		cfg.Label(scope)
		cfg.PluginRoot(p.Dir)
		if p.Data != "" {
			cfg.PluginData(p.Data)
		}
		files = append(files, path)
		out = append(out, cfg)
	}
	def := filepath.Join(p.Dir, pluginHooksFile)
	// outside reports (and warns) that path of a plugin found in a skills directory resolves
	// outside it.
	outside := func(path string) bool {
		real, err := filepath.EvalSymlinks(path)
		if p.nested && err == nil && !dirHolds(p.Dir, real) {
			warn("%s: skipped: it resolves to %s, outside the plugin", path, real)
			return true
		}
		return false
	}
	readFile := func(path string) {
		if outside(path) {
			return
		}
		data, err := readSmall(path)
		if err != nil {
			warn("%s: skipped: %v", path, err)
			return
		}
		load(path, data, true)
	}
	if exists(def) {
		readFile(def)
	}
	m, ok := readManifest(p.Dir, warn)
	if !ok || len(m.Hooks) == 0 || outside(filepath.Join(p.Dir, pluginManifest)) || string(m.Hooks) == "null" {
		return command.Merge(out...), files
	}
	mpath := filepath.Join(p.Dir, pluginManifest)
	t := bytes.TrimSpace(m.Hooks)
	var paths []string
	switch t[0] {
	case '{':
		var probe map[string]json.RawMessage
		_ = json.Unmarshal(t, &probe)
		_, wrapped := probe["hooks"]
		load(mpath, t, wrapped)
	case '"':
		var one string
		_ = json.Unmarshal(t, &one)
		paths = []string{one}
	case '[':
		if json.Unmarshal(t, &paths) != nil {
			warn("%s: hooks: not a path, a list of paths or a hooks object; ignored", mpath)
		}
	default:
		warn("%s: hooks: not a path, a list of paths or a hooks object; ignored", mpath)
	}
	for _, rel := range paths {
		path := filepath.Join(p.Dir, filepath.FromSlash(rel))
		switch {
		case filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(strings.TrimPrefix(rel, "./"))):
			warn("%s: hooks: %q is not a path inside the plugin; ignored", mpath, rel)
		case path == def:
			// hooks/hooks.json loads anyway; naming it again does not load it twice.
		default:
			readFile(path)
		}
	}
	return command.Merge(out...), files
}

// parsePluginHooks reads a hooks file's content: {"description": …, "hooks": {…}} when
// wrapped, else the hooks object itself. Like Claude Code's settings files it is lenient:
// what is wrong is a warning and left out.
func parsePluginHooks(path string, data []byte, wrapped bool, warn func(string, ...any)) (command.Config, bool) {
	if err := strictjson.Check(data); err != nil {
		warn("%s: skipped: %v", path, err)
		return nil, false
	}
	raw := json.RawMessage(data)
	if wrapped {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			warn("%s: skipped: %v", path, err)
			return nil, false
		}
		for _, k := range sortedKeys(top) {
			if k != "hooks" && k != "description" && k != "$schema" {
				warn("%s: ignoring %q (a plugin's hooks file holds description and hooks)", path, k)
			}
		}
		raw = top["hooks"]
	}
	var cfg command.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		warn("%s: hooks: skipped: %v", path, err)
		return nil, false
	}
	unknownHookFields(raw, func(format string, args ...any) { warn("%s: "+format, append([]any{path}, args...)...) })
	ws, _ := cfg.Check("hooks", true)
	for _, w := range ws {
		warn("%s: %s", path, w)
	}
	return cfg, true
}

// installedPlugins returns the installed plugins enabled (id → the settings file enabling
// it, "" for one a later file set to false) under the Claude Code directory cfg.
func installedPlugins(cfg, root string, enabled map[string]string, warn func(string, ...any)) []Plugin {
	if cfg == "" || len(enabled) == 0 {
		return nil
	}
	base := filepath.Join(cfg, "plugins")
	paths := readInstalled(filepath.Join(base, installedFile), root, warn)
	realBase := base
	if r, err := filepath.EvalSymlinks(base); err == nil {
		realBase = r
	}
	var out []Plugin
	for _, id := range sortedKeys(enabled) {
		from := enabled[id]
		if from == "" {
			continue // set to false by a later file
		}
		dir := paths[id]
		if dir == "" {
			dir = cachedPlugin(base, id)
		}
		if dir == "" {
			warn("%s: enabledPlugins: %q is enabled but not installed under %s; its hooks do not load", from, id, base)
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || !dirHolds(realBase, real) {
			warn("%s: plugin %s: %s is not a directory inside %s; its hooks do not load", from, id, dir, base)
			continue
		}
		ns, _, _ := strings.Cut(id, "@")
		if m, ok := readManifest(real, func(string, ...any) {}); ok && m.Name != "" {
			ns = m.Name // a broken manifest is warned once, when its hooks are read
		}
		out = append(out, Plugin{Name: id, Namespace: ns, Dir: real, From: "enabled in " + from})
	}
	return out
}

// readInstalled reads installed_plugins.json (its version 1 and 2 shapes) into id → install
// path: for a plugin installed in several scopes, the project or local installation of root
// wins over the user's. A missing file is empty; a broken one is a warning.
func readInstalled(path, root string, warn func(string, ...any)) map[string]string {
	data, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var f struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err == nil {
		err = strictjson.UnmarshalLoose(data, &f)
	}
	if err != nil {
		warn("%s: skipped: %v", path, err)
		return nil
	}
	type entry struct {
		Scope       string `json:"scope"`
		InstallPath string `json:"installPath"`
		ProjectPath string `json:"projectPath"`
	}
	out := map[string]string{}
	for id, raw := range f.Plugins {
		var list []entry
		if json.Unmarshal(raw, &list) != nil {
			var one entry
			if json.Unmarshal(raw, &one) != nil {
				warn("%s: plugins.%s: not an installation entry; ignored", path, id)
				continue
			}
			list = []entry{one}
		}
		for _, e := range list {
			local := (e.Scope == "project" || e.Scope == "local") && e.ProjectPath != "" && sameFile(e.ProjectPath, root)
			if e.InstallPath != "" && filepath.IsAbs(e.InstallPath) && (local || out[id] == "" && (e.Scope == "" || e.Scope == "user")) {
				out[id] = e.InstallPath
			}
		}
	}
	return out
}

// cachedPlugin finds plugin id ("name@marketplace") in Claude Code's plugin cache:
// cache/<marketplace>/<name>/ itself when it is a plugin, else its most recently changed
// version directory; "" when there is none.
func cachedPlugin(base, id string) string {
	name, market, ok := strings.Cut(id, "@")
	if !ok || !filepath.IsLocal(name) || !filepath.IsLocal(market) || strings.ContainsRune(name+market, filepath.Separator) {
		return ""
	}
	dir := filepath.Join(base, "cache", market, name)
	if isPluginDir(dir) {
		return dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var best string
	var bestTime int64
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() || !isPluginDir(p) {
			continue
		}
		if t := fi.ModTime().UnixNano(); best == "" || t > bestTime || t == bestTime && e.Name() > filepath.Base(best) {
			best, bestTime = p, t
		}
	}
	return best
}

// isPluginDir reports whether dir looks like a plugin: a manifest, a hooks file, or skills.
func isPluginDir(dir string) bool {
	return slices.ContainsFunc([]string{pluginManifest, pluginHooksFile, "skills"}, func(p string) bool { return exists(filepath.Join(dir, p)) })
}
