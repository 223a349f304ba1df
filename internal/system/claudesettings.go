package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/strictjson"
)

// Claude Code's settings files, read as a second source under rein's own (see
// claudeSources): the user's, and the project's shared and local files, which the trust
// gate guards like .rein/settings.json.
const (
	claudeDir           = ".claude"
	claudeSettings      = "settings.json"
	claudeLocalSettings = "settings.local.json"
)

// Scopes of settings sources, as hooks are labelled ("claude-project:PreToolUse[0].hooks[0]").
const (
	ScopeGlobal        = "global"
	ScopeProject       = "project"
	ScopeClaudeUser    = "claude-user"
	ScopeClaudeProject = "claude-project"
	ScopeClaudeLocal   = "claude-local"
)

// SettingsSource is one settings file a run reads or would read, for `rein context`.
type SettingsSource struct {
	Path  string `json:"path"`
	Scope string `json:"scope"`
	// State is "loaded", "missing", "untrusted" (a project file of an untrusted project) or
	// "invalid" (a Claude Code file that does not parse: skipped, as Claude Code skips it).
	State string `json:"state"`
}

// claudeUserSettingsPath is ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when
// set); "" when no home directory is known.
func claudeUserSettingsPath(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, claudeSettings)
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, claudeDir, claudeSettings)
	}
	return ""
}

// claudeProjectSettingsPaths are the project's Claude Code settings files, shared then local.
func claudeProjectSettingsPaths(root string) []string {
	return []string{filepath.Join(root, claudeDir, claudeSettings), filepath.Join(root, claudeDir, claudeLocalSettings)}
}

// claudeOnlyKeys are the top-level keys Claude Code documents that rein does not implement:
// accepted with a warning, in Claude Code's files and in rein's own.
var claudeOnlyKeys = []string{
	"$schema", "model", "fallbackModel", "availableModels", "effortLevel", "alwaysThinkingEnabled",
	"statusLine", "apiKeyHelper", "otelHeadersHelper", "awsAuthRefresh", "awsCredentialExport", "cleanupPeriodDays",
	"respectGitignore", "includeCoAuthoredBy", "attribution", "outputStyle", "theme", "spinnerTips", "spinnerTipsEnabled",
	"spinnerVerbs", "spinnerTipsOverride", "editorMode", "viewMode", "tui", "voice", "voiceEnabled", "language",
	"autoUpdatesChannel", "feedbackSurveyRate", "forceLoginMethod", "forceLoginOrgUUID", "enableAllProjectMcpServers",
	"enabledMcpjsonServers", "disabledMcpjsonServers", "allowedMcpServers", "deniedMcpServers", "claudeMdExcludes",
	"allowManagedHooksOnly", "allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly", "strictKnownMarketplaces",
	"enabledPlugins", "extraKnownMarketplaces", "companyAnnouncements", "sandbox", "disableAllHooks", "hooks",
	"permissions", "skipWebFetchPreflight", "instructionFiles", "autoCompactEnabled", "verbose", "preferredNotifChannel",
}

// claudePermissionKeys are the permissions members Claude Code documents beyond the rule lists.
var claudePermissionKeys = []string{"defaultMode", "additionalDirectories", "disableBypassPermissionsMode", "disableAutoMode"}

// readPermissionNames are the permissions members beyond the rule lists rein reads (see
// readPermissionKeys).
var readPermissionNames = []string{"defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}

// claudeFile is the part of a Claude Code settings file rein reads.
type claudeFile struct {
	Permissions struct {
		Allow []string `json:"allow"`
		Ask   []string `json:"ask"`
		Deny  []string `json:"deny"`
	} `json:"permissions"`
	Hooks           json.RawMessage `json:"hooks"`
	DisableAllHooks bool            `json:"disableAllHooks"`
}

// readClaudeSettings reads a Claude Code settings file leniently, as Claude Code does: a
// missing file is empty; one that is not valid JSON is skipped with a warning; keys rein
// does not implement are named in one warning; permission rules map onto rein's (see
// policy.FromClaude), those that do not with a warning each; hook entries that are wrong are
// dropped with a warning. ok says the file exists; invalid that it was skipped.
func readClaudeSettings(path, scope, ruleRoot string) (s Settings, ok, invalid bool) {
	data, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, false
	}
	warn := func(format string, args ...any) {
		s.warnings = append(s.warnings, path+": "+fmt.Sprintf(format, args...))
	}
	var top map[string]json.RawMessage
	if err == nil {
		err = strictjson.UnmarshalLoose(data, &top)
	}
	if err != nil {
		warn("skipped, as Claude Code skips a settings file it cannot read: %v", err)
		return Settings{warnings: s.warnings}, true, true
	}
	var f claudeFile
	var ignored []string
	for _, k := range sortedKeys(top) {
		switch k {
		case "permissions":
			var p map[string]json.RawMessage
			_ = json.Unmarshal(top[k], &p)
			for _, pk := range sortedKeys(p) {
				if !slices.Contains([]string{"allow", "ask", "deny"}, pk) && !slices.Contains(readPermissionNames, pk) {
					ignored = append(ignored, "permissions."+pk)
				}
			}
			_ = readPermissionKeys(&s, top[k], path, scope != ScopeClaudeUser, false)
		case "env":
			s.Env = claudeEnv(top[k], warn)
		case "enabledPlugins":
			s.enabledPlugins = claudePlugins(top[k], path, warn)
		case "hooks", "disableAllHooks", "$schema":
		default:
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		warn("ignoring what rein does not implement: %s", strings.Join(ignored, ", "))
	}
	if err := json.Unmarshal(data, &f); err != nil {
		warn("skipped: %v", err)
		return Settings{warnings: s.warnings}, true, true
	}
	base := policy.ClaudeBase{Root: ruleRoot}
	for _, l := range []struct {
		name  string
		rules []string
		to    *[]string
	}{{"allow", f.Permissions.Allow, &s.Permissions.Allow}, {"ask", f.Permissions.Ask, &s.Permissions.Ask}, {"deny", f.Permissions.Deny, &s.Permissions.Deny}} {
		for i, r := range l.rules {
			mapped, why := policy.FromClaude(r, l.name, base)
			if why != "" {
				warn("permissions.%s[%d]: %q not applied: %s", l.name, i, r, why)
			}
			*l.to = append(*l.to, mapped...)
		}
	}
	if f.DisableAllHooks {
		s.disableClaudeHooks = true
	}
	if len(f.Hooks) > 0 {
		var cfg command.Config
		if err := json.Unmarshal(f.Hooks, &cfg); err != nil {
			warn("hooks: skipped: %v", err)
		} else {
			unknownHookFields(f.Hooks, warn)
			ws, _ := cfg.Check("hooks", true)
			for _, w := range ws {
				warn("%s", w)
			}
			cfg.Label(scope)
			s.Hooks = cfg
			if len(cfg) > 0 {
				s.hookFiles = []hookFile{{path: path, cfg: cfg}}
			}
		}
	}
	return s, true, false
}

// unknownHookFields warns about handler fields Claude Code's files hold that rein does not
// know (json.Unmarshal dropped them).
func unknownHookFields(raw json.RawMessage, warn func(string, ...any)) {
	var events map[string][]struct {
		Hooks []map[string]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(raw, &events) != nil {
		return
	}
	known := map[string]bool{}
	for _, f := range hookFieldNames {
		known[f] = true
	}
	seen := map[string]bool{}
	for _, e := range sortedKeys(events) {
		for _, g := range events[e] {
			for _, h := range g.Hooks {
				for k := range h {
					if !known[k] && !seen[k] {
						seen[k] = true
						warn("hooks.%s: ignoring the handler field %q (rein does not know it)", e, k)
					}
				}
			}
		}
	}
}

// readSmall reads a regular settings file of at most maxSettingsBytes.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSettingsBytes+1))
	if err == nil && len(data) > maxSettingsBytes {
		err = fmt.Errorf("larger than %d bytes", maxSettingsBytes)
	}
	return data, err
}

// claudeInReinFile takes the Claude Code keys rein does not implement out of a rein settings
// file's top level and permissions (copied from .claude/settings.json they are no typos),
// returning the rest to be parsed strictly and a warning naming what was taken out. Rules
// rein's syntax refuses but Claude Code's maps are mapped; a rule neither reads stays, to be
// refused as a typo.
func claudeInReinFile(path string, data []byte, ruleRoot string) ([]byte, []string, error) {
	var top map[string]json.RawMessage
	if strictjson.UnmarshalLoose(data, &top) != nil {
		return data, nil, nil // the strict parse reports it
	}
	var ignored, warnings []string
	stripped := false
	for _, k := range sortedKeys(top) {
		// rein's own keys stay; Claude Code's "sandbox" is an object, rein's a boolean.
		own := k == "hooks" || k == "permissions" || k == "env" || k == "sandbox" && !bytes.HasPrefix(bytes.TrimSpace(top[k]), []byte("{"))
		if !own && slices.Contains(claudeOnlyKeys, k) {
			ignored = append(ignored, k)
			delete(top, k)
		}
	}
	if raw, ok := top["permissions"]; ok {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) == nil {
			for _, pk := range claudePermissionKeys {
				if _, ok := p[pk]; ok {
					if !slices.Contains(readPermissionNames, pk) {
						ignored = append(ignored, "permissions."+pk)
					}
					delete(p, pk)
					stripped = true
				}
			}
			for _, list := range []string{"allow", "ask", "deny"} {
				var rules []string
				if json.Unmarshal(p[list], &rules) != nil {
					continue
				}
				var out []string
				for i, r := range rules {
					if _, err := policy.ParseRule(r); err == nil {
						out = append(out, r)
						continue
					}
					mapped, why := policy.FromClaude(r, list, policy.ClaudeBase{Root: ruleRoot})
					switch {
					case len(mapped) > 0:
						out = append(out, mapped...)
					case strings.HasPrefix(why, "rein has no "):
						warnings = append(warnings, fmt.Sprintf("%s: permissions.%s[%d]: %q not applied: %s", path, list, i, r, why))
					default:
						out = append(out, r)
					}
				}
				p[list], _ = json.Marshal(out)
			}
			top["permissions"], _ = json.Marshal(p)
		}
	}
	if len(ignored) == 0 && len(warnings) == 0 && !stripped {
		return data, nil, nil
	}
	if len(ignored) > 0 {
		warnings = append([]string{fmt.Sprintf("%s: ignoring Claude Code settings rein does not implement: %s", path, strings.Join(ignored, ", "))}, warnings...)
	}
	out, err := json.Marshal(top)
	return out, warnings, err
}

// lineOf returns the 1-based line of the first `"key":` in data, 0 when there is none.
func lineOf(data []byte, key string) int {
	q, _ := json.Marshal(key)
	for i := 0; ; {
		j := bytes.Index(data[i:], q)
		if j < 0 {
			return 0
		}
		at := i + j
		rest := bytes.TrimLeft(data[at+len(q):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return bytes.Count(data[:at], []byte("\n")) + 1
		}
		i = at + len(q)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hookFieldNames are command.Hook's JSON names.
var hookFieldNames = []string{"type", "command", "args", "shell", "timeout", "async", "asyncRewake", "if", "statusMessage",
	"once", "url", "headers", "allowedEnvVars", "server", "tool", "input", "prompt", "model", "failClosed"}

// withClaudeSettings merges Claude Code's settings files under rein's (s): the user's
// always, the project's shared and local files when the project is trusted. It returns the
// merged settings and every settings file with its state. A disableAllHooks in a Claude Code
// file turns off the hooks of Claude Code's files (rein's own are not theirs to turn off).
func withClaudeSettings(o Options, s Settings, root string, trusted bool) (Settings, []SettingsSource) {
	var sources []SettingsSource
	add := func(path, scope, state string) {
		sources = append(sources, SettingsSource{Path: path, Scope: scope, State: state})
	}
	state := func(path string, loaded bool) string {
		if !exists(path) {
			return "missing"
		}
		if !loaded {
			return "untrusted"
		}
		return "loaded"
	}
	add(filepath.Join(o.Home, SettingsFile), ScopeGlobal, state(filepath.Join(o.Home, SettingsFile), true))
	if p := projectSettingsPath(root); !sameFile(filepath.Dir(p), o.Home) {
		add(p, ScopeProject, state(p, trusted))
	}
	var claude Settings
	read := func(path, scope, ruleRoot string, load bool) {
		if path == "" {
			return
		}
		if !load {
			add(path, scope, state(path, false))
			return
		}
		cs, ok, invalid := readClaudeSettings(path, scope, ruleRoot)
		switch {
		case invalid:
			add(path, scope, "invalid")
		case ok:
			add(path, scope, "loaded")
		default:
			add(path, scope, "missing")
		}
		claude = claude.merge(cs)
	}
	user := claudeUserSettingsPath(o.Getenv)
	read(user, ScopeClaudeUser, filepath.Dir(user), true)
	project := claudeProjectSettingsPaths(root)
	read(project[0], ScopeClaudeProject, root, trusted)
	read(project[1], ScopeClaudeLocal, root, trusted)
	if claude.disableClaudeHooks && len(claude.Hooks) > 0 {
		claude.Hooks, claude.hookFiles = nil, nil
		claude.warnings = append(claude.warnings, "disableAllHooks is set in a Claude Code settings file: the hooks of Claude Code's settings files do not run")
	}
	merged := s.merge(claude)
	// rein's own files win over Claude Code's for a variable both set, and for the mode.
	merged.Env = overlayEnv(claude.Env, s.Env)
	if s.permMode != nil {
		merged.permMode = s.permMode
	}
	return merged, sources
}

// claudeEnv reads a Claude Code file's "env" leniently: string values, and numbers and
// booleans as written; a name that is not a variable name or another value is a warning
// naming the key (never the value) and dropped.
func claudeEnv(raw json.RawMessage, warn func(string, ...any)) map[string]string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		warn("env: ignored: it is not an object of strings")
		return nil
	}
	out := map[string]string{}
	for _, k := range sortedKeys(m) {
		v := bytes.TrimSpace(m[k])
		var str string
		switch {
		case !command.ValidEnvName(k):
			warn("env: %q is not an environment variable name: ignored", k)
			continue
		case json.Unmarshal(v, &str) == nil:
		case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9' || string(v) == "true" || string(v) == "false"):
			str = string(v)
		default:
			warn("env.%s: ignored: the value is not a string", k)
			continue
		}
		out[k] = str
	}
	return out
}

// claudePlugins reads a Claude Code file's "enabledPlugins" ({"name@marketplace": true}):
// id → path for true, "" for false; another value is a warning.
func claudePlugins(raw json.RawMessage, path string, warn func(string, ...any)) map[string]string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		warn("enabledPlugins: ignored: it is not an object of plugin ids and booleans")
		return nil
	}
	out := map[string]string{}
	for _, id := range sortedKeys(m) {
		var on bool
		if err := json.Unmarshal(m[id], &on); err != nil {
			warn("enabledPlugins.%s: ignored: the value is not true or false", id)
			continue
		}
		out[id] = ""
		if on {
			out[id] = path
		}
	}
	return out
}
