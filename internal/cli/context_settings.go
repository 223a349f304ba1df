package cli

import (
	"fmt"
	"io"

	"github.com/reinhq/rein/internal/system"
)

// writeSettingsSources lists the settings files `rein context` read: rein's own, then Claude
// Code's, each with its scope and state (loaded, missing, untrusted, invalid).
func writeSettingsSources(w io.Writer, sources []system.SettingsSource) {
	for _, s := range sources {
		if s.State == "missing" {
			continue
		}
		fmt.Fprintf(w, "settings: %s (%s, %s)\n", s.Path, s.Scope, s.State)
	}
}

// writeHooks lists the plugins whose hooks load and every configured hook with its source;
// a hook that never runs says so.
func writeHooks(w io.Writer, plugins []system.Plugin, hooks []system.HookEntry) {
	for _, p := range plugins {
		fmt.Fprintf(w, "plugin: %s %s (%s)\n", p.Name, p.Dir, p.From)
	}
	for _, line := range hookLines(hooks) {
		fmt.Fprintf(w, "hook: %s\n", line)
	}
}

// hookLines renders hooks one a line: event, matcher, command, name and file.
func hookLines(hooks []system.HookEntry) []string {
	out := make([]string, 0, len(hooks))
	for _, h := range hooks {
		m := ""
		if h.Matcher != "" {
			m = "(" + h.Matcher + ") "
		}
		never := ""
		if !h.Runs {
			never = " [accepted, never run]"
		}
		out = append(out, fmt.Sprintf("%s %s%s  [%s, %s]%s", h.Event, m, h.Command, h.Name, h.Source, never))
	}
	return out
}

// writeTrustedHooks lists, for rein trust --show, the hooks a trusted run in dir would load
// (rein's, Claude Code's and plugins'), each with its file.
func writeTrustedHooks(e *env, home, dir string) error {
	hooks, err := system.HooksInForce(system.Options{Dir: dir, Home: home, Getenv: e.getenv}, true)
	if err != nil {
		fmt.Fprintf(e.stdout, "hooks: not listed: %v\n", err)
		return nil
	}
	if len(hooks) == 0 {
		return nil
	}
	fmt.Fprintln(e.stdout, "hooks a trusted run loads:")
	for _, l := range hookLines(hooks) {
		fmt.Fprintf(e.stdout, "  %s\n", l)
	}
	return nil
}
