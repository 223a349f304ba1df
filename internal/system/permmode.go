package system

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/policy"
)

// Permission modes: Claude Code's permissions.defaultMode, as rein runs them (see the README's
// table). Deny rules and protected paths hold in every mode.
const (
	// ModeDefault: ask rules ask (a run that cannot ask refuses the call).
	ModeDefault = "default"
	// ModeAcceptEdits: ask rules on write and edit let the call run without asking.
	ModeAcceptEdits = "acceptEdits"
	// ModePlan: only tools that change nothing (read, grep, find, ls, read-only MCP tools)
	// run; every other call is refused.
	ModePlan = "plan"
	// ModeDontAsk: ask rules refuse the call without asking, as in a non-interactive run.
	ModeDontAsk = "dontAsk"
	// ModeBypass: ask rules let the call run without asking; deny rules, protected paths,
	// the trust gate, the sandbox and hooks (a PreToolUse "ask" still asks) are unchanged.
	ModeBypass = "bypassPermissions"
)

// claudeModes are the values Claude Code documents; "auto" has no equivalent in rein and
// "manual" is "default".
var claudeModes = []string{ModeDefault, ModeAcceptEdits, ModePlan, "auto", ModeDontAsk, ModeBypass, "manual"}

// CodePlanMode: a call refused because the permission mode is plan.
const CodePlanMode = "policy.plan_mode"

// modeSetting is a permissions.defaultMode with the file that set it.
type modeSetting struct {
	mode, file string
	// project: set by a project's file (.rein/settings.json, .claude/settings*.json).
	project bool
}

// readPermissionKeys reads permissions.defaultMode, additionalDirectories and
// disableBypassPermissionsMode of a settings file's permissions object into s. strict (rein's
// own files) makes a value of the wrong type or a mode Claude Code does not know an error;
// otherwise it is a warning and the key is ignored.
func readPermissionKeys(s *Settings, perms json.RawMessage, path string, project, strict bool) error {
	var p struct {
		DefaultMode                  json.RawMessage `json:"defaultMode"`
		AdditionalDirectories        json.RawMessage `json:"additionalDirectories"`
		DisableBypassPermissionsMode json.RawMessage `json:"disableBypassPermissionsMode"`
	}
	if len(perms) == 0 || json.Unmarshal(perms, &p) != nil {
		return nil
	}
	problem := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if strict {
			return fmt.Errorf("%s", msg)
		}
		s.warnings = append(s.warnings, path+": "+msg+" (ignored)")
		return nil
	}
	if p.DefaultMode != nil {
		var mode string
		if json.Unmarshal(p.DefaultMode, &mode) != nil || !slices.Contains(claudeModes, mode) {
			if err := problem("permissions.defaultMode: %s is not a permission mode; use one of %s", p.DefaultMode, strings.Join(claudeModes, ", ")); err != nil {
				return err
			}
		} else {
			s.permMode = &modeSetting{mode: mode, file: path, project: project}
		}
	}
	if p.DisableBypassPermissionsMode != nil {
		var v string
		if json.Unmarshal(p.DisableBypassPermissionsMode, &v) != nil || v != "disable" {
			if err := problem("permissions.disableBypassPermissionsMode: %s is not \"disable\"", p.DisableBypassPermissionsMode); err != nil {
				return err
			}
		} else {
			s.disableBypass = true
		}
	}
	if p.AdditionalDirectories != nil {
		var dirs []string
		if json.Unmarshal(p.AdditionalDirectories, &dirs) != nil {
			return problem("permissions.additionalDirectories: not a list of directories")
		}
		for i, d := range dirs {
			if strings.TrimSpace(d) == "" {
				if err := problem("permissions.additionalDirectories[%d]: empty", i); err != nil {
					return err
				}
				continue
			}
			s.extraDirs = append(s.extraDirs, extraDir{path: d, file: path, project: project})
		}
	}
	return nil
}

// permissionMode resolves the mode of merged settings: the mode rein runs, and warnings for
// what it does not honour — "auto" (no equivalent), "bypassPermissions" from a project's file
// (a project cannot turn prompts off) or with disableBypassPermissionsMode set.
func permissionMode(s Settings) (mode, from string, warnings []string) {
	m := s.permMode
	if m == nil {
		return ModeDefault, "", nil
	}
	switch {
	case m.mode == "manual":
		return ModeDefault, m.file, nil
	case m.mode == "auto":
		return ModeDefault, m.file, []string{fmt.Sprintf("%s: permissions.defaultMode \"auto\": rein has no auto mode (a classifier approving calls); it runs in \"default\" mode", m.file)}
	case m.mode == ModeBypass && m.project:
		return ModeDefault, m.file, []string{fmt.Sprintf("%s: permissions.defaultMode \"bypassPermissions\" ignored: a project's settings cannot turn permission prompts off; set it in ~/.claude/settings.json or $REIN_HOME/settings.json", m.file)}
	case m.mode == ModeBypass && s.disableBypass:
		return ModeDefault, m.file, []string{fmt.Sprintf("%s: permissions.defaultMode \"bypassPermissions\" ignored: permissions.disableBypassPermissionsMode is \"disable\"", m.file)}
	}
	return m.mode, m.file, nil
}

// ownSession reports whether o builds a person's own session (the default role), the only
// kind the permission mode and additional directories apply to: a delivery run's stage
// agents keep their role's surface and their worktree.
func ownSession(o Options) bool { return o.Role == "" || o.Role == policy.RoleDefault }
