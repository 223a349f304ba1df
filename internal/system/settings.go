package system

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/strictjson"
)

// SettingsFile is the name of the settings file, in $REIN_HOME and in a project's .rein/.
const SettingsFile = "settings.json"

// maxSettingsBytes bounds a settings file.
const maxSettingsBytes = 1 << 20

// Settings are the contents of a settings.json. The global file ($REIN_HOME/settings.json)
// may hold every field; a project's .rein/settings.json is read only once the project is
// trusted, and may not hold "trust" (a project cannot vouch for itself).
type Settings struct {
	// Permissions are permission rules for tool calls (see package policy for the syntax).
	Permissions policy.Rules `json:"permissions"`
	// Trust configures the project trust gate; global only.
	Trust *TrustSettings `json:"trust,omitempty"`
	// Sandbox runs bash and approved commands in the OS sandbox, as --sandbox does; global
	// only (a project cannot choose how it is confined).
	Sandbox bool `json:"sandbox,omitempty"`
	// Bash configures the bash tool; global only.
	Bash *BashSettings `json:"bash,omitempty"`
	// Hooks are command hooks in Claude Code's shape (see package hooks/command); the
	// project's run after the global ones.
	Hooks command.Config `json:"hooks,omitempty"`
	// SecretEnv adds name patterns (path.Match syntax, case-insensitive) to the environment
	// variables the bash tool never passes on (shell.DefaultSecretEnv); global only.
	SecretEnv []string `json:"secretEnv,omitempty"`
	// Env are variables set for the session's tools, as Claude Code's "env": the bash
	// tool's commands and the hooks get them; a later file's value of a name wins.
	Env map[string]string `json:"env,omitempty"`

	// warnings say what was accepted and ignored (Claude Code keys, rules without an
	// equivalent, hook events rein never fires), each naming its file.
	warnings []string
	// disableClaudeHooks: a Claude Code file set disableAllHooks.
	disableClaudeHooks bool
	// enabledPlugins are Claude Code's "enabledPlugins": plugin id → the file enabling it,
	// "" when a file set it to false (a later file wins).
	enabledPlugins map[string]string
	// hookFiles are the hooks of each file read, for listing them with their source.
	hookFiles []hookFile
	// mode is permissions.defaultMode (nil: none set); disableBypass is
	// permissions.disableBypassPermissionsMode "disable"; extraDirs are
	// permissions.additionalDirectories (see permmode.go, extradirs.go).
	permMode      *modeSetting
	disableBypass bool
	extraDirs     []extraDir
	// MCPServers and MCP configure MCP servers (package mcp checks and merges them).
	MCPServers map[string]mcp.Server `json:"mcpServers,omitempty"`
	MCP        *mcp.Settings         `json:"mcp,omitempty"`
}

// BashSettings configure the bash tool.
type BashSettings struct {
	// KeepBackground leaves what a command starts in the background (&, nohup, setsid,
	// daemons) running after the command ends; by default every process a command started
	// ends with it. Inside the sandbox everything ends with the command regardless.
	KeepBackground bool `json:"keepBackground,omitempty"`
}

// TrustSettings configure the project trust gate.
type TrustSettings struct {
	// Mode is TrustModeAsk (the default), TrustModeAlways or TrustModeNever.
	Mode string `json:"mode,omitempty"`
	// ContextFiles is ContextFilesDefault (AGENTS.md and CLAUDE.md always load) or
	// ContextFilesGated (they load only in trusted projects).
	ContextFiles string `json:"contextFiles,omitempty"`
}

// Trust modes: what to do in a project that holds rein resources and has no decision stored.
const (
	TrustModeAsk    = "ask"    // ask on the terminal; a non-interactive run refuses
	TrustModeAlways = "always" // trust it
	TrustModeNever  = "never"  // do not trust it (its resources are ignored with a notice)
)

// Values of TrustSettings.ContextFiles.
const (
	ContextFilesDefault = "default"
	ContextFilesGated   = "gated"
)

// mode returns the trust mode, with the default filled in.
func (s Settings) mode() string {
	if s.Trust == nil || s.Trust.Mode == "" {
		return TrustModeAsk
	}
	return s.Trust.Mode
}

// gateContextFiles reports whether context files are behind the trust gate.
func (s Settings) gateContextFiles() bool {
	return s.Trust != nil && s.Trust.ContextFiles == ContextFilesGated
}

// merge appends o's rules and hooks to s's: deny, ask and allow lists and each event's hooks
// concatenate (global first).
func (s Settings) merge(o Settings) Settings {
	s.Hooks = command.Merge(s.Hooks, o.Hooks)
	s.warnings = append(append([]string(nil), s.warnings...), o.warnings...)
	s.disableClaudeHooks = s.disableClaudeHooks || o.disableClaudeHooks
	s.enabledPlugins = overlayEnv(s.enabledPlugins, o.enabledPlugins)
	s.hookFiles = append(slices.Clone(s.hookFiles), o.hookFiles...)
	if o.permMode != nil {
		s.permMode = o.permMode
	}
	s.disableBypass = s.disableBypass || o.disableBypass
	s.extraDirs = append(slices.Clone(s.extraDirs), o.extraDirs...)
	s.Env = overlayEnv(s.Env, o.Env)
	s.MCPServers, s.MCP = mcp.Merge(s.MCPServers, s.MCP, o.MCPServers, o.MCP)
	cat := func(a, b []string) []string { return append(append([]string(nil), a...), b...) }
	s.Permissions = policy.Rules{
		Allow: cat(s.Permissions.Allow, o.Permissions.Allow),
		Ask:   cat(s.Permissions.Ask, o.Permissions.Ask),
		Deny:  cat(s.Permissions.Deny, o.Permissions.Deny),
	}
	return s
}

// overlayEnv returns a's variables with b's over them (nil when both are empty).
func overlayEnv(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// ReadSettings reads the settings file at path strictly; a missing file is empty settings.
// global says whether it is $REIN_HOME's file. Every problem is an ErrConfig naming the file,
// the line where it can tell it, and the field. Claude Code keys rein does not implement
// (statusLine, env, permissions.defaultMode…) and hook events it never fires are accepted
// with a warning, as they are in Claude Code's own files; anything else unknown is an error.
func ReadSettings(path string, global bool) (Settings, error) {
	var s Settings
	var data []byte
	bad := func(format string, args ...any) (Settings, error) {
		msg := fmt.Sprintf(format, args...)
		at := path
		if n := errLine(data, msg); n > 0 {
			at = fmt.Sprintf("%s:%d", path, n)
		}
		return Settings{}, fmt.Errorf("%w: %s: %s", ErrConfig, at, msg)
	}
	data, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return bad("%v", err)
	}
	ruleRoot := filepath.Dir(filepath.Dir(path))
	if global {
		ruleRoot = filepath.Dir(path)
	}
	rest, warnings, err := claudeInReinFile(path, data, ruleRoot)
	if err != nil {
		return bad("%v", err)
	}
	if err := (strictjson.Options{MaxDocumentBytes: maxSettingsBytes}).Unmarshal(rest, &s); err != nil {
		return bad("%v (expected {\"permissions\": {\"allow\": [...], \"ask\": [...], \"deny\": [...]}, \"trust\": {\"mode\": \"ask\", \"contextFiles\": \"default\"}})", err)
	}
	s.warnings = warnings
	var top struct {
		Permissions json.RawMessage `json:"permissions"`
	}
	_ = json.Unmarshal(data, &top)
	if err := readPermissionKeys(&s, top.Permissions, path, !global, true); err != nil {
		return bad("%v", err)
	}
	hookWarnings, err := s.Hooks.Check("hooks", false)
	if err != nil {
		return bad("%v", err)
	}
	for _, w := range hookWarnings {
		s.warnings = append(s.warnings, path+": "+w)
	}
	scope := "project"
	if global {
		scope = "global"
	}
	s.Hooks.Label(scope)
	if len(s.Hooks) > 0 {
		s.hookFiles = []hookFile{{path: path, cfg: s.Hooks}}
	}
	if err := mcp.CheckSettings(s.MCPServers, s.MCP, global); err != nil {
		return bad("%v", err)
	}
	mcp.Label(s.MCPServers, path)
	for _, k := range sortedKeys(s.Env) {
		if !command.ValidEnvName(k) {
			return bad("env: %q is not an environment variable name (letters, digits and _, not starting with a digit)", k)
		}
	}
	if len(s.SecretEnv) > 0 && !global {
		return bad("secretEnv: the variables kept from commands may only be set in $REIN_HOME/%s", SettingsFile)
	}
	for i, p := range s.SecretEnv {
		if _, err := filepath.Match(p, ""); err != nil || p == "" {
			return bad("secretEnv[%d]: %q is not a name pattern (use shell-style globs such as \"MYCORP_*\")", i, p)
		}
	}
	if s.Sandbox && !global {
		return bad("sandbox: the sandbox setting may only be set in $REIN_HOME/%s", SettingsFile)
	}
	if s.Bash != nil && !global {
		return bad("bash: the bash settings may only be set in $REIN_HOME/%s", SettingsFile)
	}
	if s.Trust != nil {
		if !global {
			return bad("trust: the trust settings may only be set in $REIN_HOME/%s (a project cannot vouch for itself)", SettingsFile)
		}
		switch s.Trust.Mode {
		case "", TrustModeAsk, TrustModeAlways, TrustModeNever:
		default:
			return bad("trust.mode: %q is not a trust mode; use %q, %q or %q", s.Trust.Mode, TrustModeAsk, TrustModeAlways, TrustModeNever)
		}
		switch s.Trust.ContextFiles {
		case "", ContextFilesDefault, ContextFilesGated:
		default:
			return bad("trust.contextFiles: %q is not a setting; use %q or %q", s.Trust.ContextFiles, ContextFilesDefault, ContextFilesGated)
		}
	}
	for _, l := range []struct {
		name  string
		rules []string
	}{{"allow", s.Permissions.Allow}, {"ask", s.Permissions.Ask}, {"deny", s.Permissions.Deny}} {
		for i, r := range l.rules {
			if _, err := policy.ParseRule(r); err != nil {
				msg := err.Error()
				if pe, ok := errors.AsType[*refusal.Error](err); ok {
					msg = pe.Message
				}
				return bad("permissions.%s[%d]: %s", l.name, i, msg)
			}
		}
	}
	return s, nil
}

// projectSettingsPath returns the path of a project's settings file.
func projectSettingsPath(root string) string {
	return filepath.Join(root, ".rein", SettingsFile)
}

// errLine finds the line of the field a settings error names: the unknown field it quotes,
// else the last key of the path it starts with ("hooks.PreToolUse[0].matcher: …").
func errLine(data []byte, msg string) int {
	if len(data) == 0 {
		return 0
	}
	if _, after, ok := strings.Cut(msg, `unknown field "`); ok {
		if key, _, ok := strings.Cut(after, `"`); ok {
			return lineOf(data, key)
		}
	}
	path, _, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(path, " \"") {
		return 0
	}
	keys := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	for i := len(keys) - 1; i >= 0; i-- {
		if k := keys[i]; k != "" && (k[0] < '0' || k[0] > '9') {
			return lineOf(data, k)
		}
	}
	return 0
}
