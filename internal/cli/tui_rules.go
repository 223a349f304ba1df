package cli

import (
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tui"
)

// uiHost implements tui.RuleWriter: "always allow" in the approval prompt.
var _ tui.RuleWriter = (*uiHost)(nil)

// AllowRule is the narrowest rule naming the call (policy.AllowRuleFor).
func (h *uiHost) AllowRule(a tui.Approval) string { return policy.AllowRuleFor(a.Tool, a.Part) }

// AllowAlways adds rule to the allow list of the project's .rein/settings.json (project) or
// $REIN_HOME/settings.json, written atomically with the rest of the file kept.
func (h *uiHost) AllowAlways(rule string, project bool) (string, error) {
	path := filepath.Join(h.home, system.SettingsFile)
	if project {
		path = filepath.Join(h.dir, ".rein", system.SettingsFile)
	}
	return path, system.AddAllowRule(path, rule, !project)
}

// AlwaysAllowed reports whether a settings file in force lists rule among its allow rules.
func (h *uiHost) AlwaysAllowed(rule string, trusted bool) bool {
	_, sets, err := h.settingsFiles(trusted)
	if err != nil {
		return false
	}
	for _, s := range sets {
		if slices.Contains(s.Permissions.Allow, rule) {
			return true
		}
	}
	return false
}
