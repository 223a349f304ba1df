package command

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/lazyre"
)

// The events rein runs command hooks for, named as Claude Code names them.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	UserPromptSubmit   = "UserPromptSubmit"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
	Stop               = "Stop"
	PreCompact         = "PreCompact"
)

// Events lists the events rein fires, in the order [Runner.Register] registers them
// (Notification, not a kernel point, is fired by [Runner.Notify]).
var Events = []string{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, SessionEnd, Stop, PreCompact, Notification}

// ClaudeEvents lists every event Claude Code documents. Configuration accepts all of them;
// those not in [Events] are "accepted, never fired": [Config.Check] warns about them and
// their hooks never run.
var ClaudeEvents = []string{
	"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion", "MessageDisplay",
	"PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
	"Notification", "SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "Stop", "StopFailure",
	"TeammateIdle", "ConfigChange", "CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate",
	"WorktreeRemove", "PreCompact", "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd",
}

// handlerTypes are Claude Code's hook types; rein runs "command" only.
var handlerTypes = []string{"command", "http", "mcp_tool", "prompt", "agent"}

// DefaultTimeout bounds a command whose hook sets no timeout.
const DefaultTimeout = 60 * time.Second

// Config is the "hooks" member of a settings file, in Claude Code's shape: an event name maps
// to matcher groups, each naming the commands to run when its matcher matches.
//
//	{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]}]}
type Config map[string][]Group

// Group is one matcher and its hooks.
type Group struct {
	// Matcher selects what the group runs for (see [compile]): the tool name (PreToolUse,
	// PostToolUse, PostToolUseFailure; Claude Code's name or rein's), the trigger (PreCompact:
	// manual, auto), the source (SessionStart: startup, resume) or the reason (SessionEnd).
	// "", "*" or none match everything. Ignored for UserPromptSubmit and Stop.
	Matcher string `json:"matcher,omitempty"`
	Hooks   []Hook `json:"hooks"`
}

// Hook is one handler. Every field Claude Code documents is accepted; rein runs the
// "command" ones (see [Config.Check] for what is skipped with a warning).
type Hook struct {
	// Type must be one of Claude Code's types; only "command" runs.
	Type string `json:"type"`
	// Command is run with sh -c in the project directory, the event's JSON on stdin; with
	// Args it is the program, run without a shell.
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Shell is "bash" (the default: rein uses sh -c) or "powershell" (skipped).
	Shell string `json:"shell,omitempty"`
	// Timeout in seconds; 0 means DefaultTimeout. The command's process group is killed when
	// it runs out.
	Timeout float64 `json:"timeout,omitempty"`
	// Async runs the command in the background: its decisions have no effect, and the
	// additionalContext and systemMessage it prints reach the model at the next tool result
	// or prompt. AsyncRewake implies Async.
	Async       bool `json:"async,omitempty"`
	AsyncRewake bool `json:"asyncRewake,omitempty"`
	// If is one permission rule ("Bash(git *)", "Edit(*.ts)") the call must also match, for
	// tool events; a hook with If never runs for other events.
	If string `json:"if,omitempty"`
	// StatusMessage is spinner text in Claude Code; accepted and unused.
	StatusMessage string `json:"statusMessage,omitempty"`
	// Once (skill frontmatter) runs the hook once per session.
	Once bool `json:"once,omitempty"`
	// Fields of the other handler types, accepted so that such handlers parse; never used.
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
	Server         string            `json:"server,omitempty"`
	Tool           string            `json:"tool,omitempty"`
	Input          json.RawMessage   `json:"input,omitempty"`
	Prompt         string            `json:"prompt,omitempty"`
	Model          string            `json:"model,omitempty"`
	// FailClosed (a rein extension) makes a failing command — another exit status than 0 and
	// 2, a timeout, output that is not a valid answer — refuse what its event guards instead
	// of being ignored (the default: fail open).
	FailClosed bool `json:"failClosed,omitempty"`

	// name says where the hook was configured, for records: "project:PreToolUse[0].hooks[1]".
	name string
	// pluginRoot is the plugin directory of a plugin's hook (CLAUDE_PLUGIN_ROOT), pluginData
	// its persistent data directory (CLAUDE_PLUGIN_DATA, "" for none).
	pluginRoot, pluginData string
	// skip says the hook is accepted but never runs (a warning said why).
	skip bool
}

// Name returns where the hook was configured ("" before [Config.Label]).
func (h Hook) Name() string { return h.name }

// async reports whether the hook runs in the background.
func (h Hook) async() bool { return h.Async || h.AsyncRewake }

// timeout returns the hook's timeout.
func (h Hook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(h.Timeout * float64(time.Second))
}

// Check reports the problems of c, naming their path under prefix ("hooks"), and marks the
// hooks rein accepts but does not run. It returns warnings — an event rein never fires, a
// handler type other than "command", a PowerShell hook — and the first error: an unknown
// event or type, an empty command, a bad timeout, a matcher or "if" rule that does not
// compile. With lenient (a Claude Code settings file) an error is a warning too and only the
// offending group or hook is dropped; err is then nil.
func (c Config) Check(prefix string, lenient bool) (warnings []string, err error) {
	problem := func(format string, args ...any) bool {
		msg := fmt.Sprintf(format, args...)
		if lenient {
			warnings = append(warnings, msg+" (ignored)")
			return true
		}
		err = fmt.Errorf("%s", msg)
		return false
	}
	var never []string
	defer func() {
		if len(never) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: accepted, never fired: rein has no such event, so these hooks never run", strings.Join(never, ", ")))
		}
	}()
	for _, event := range sortedEvents(c) {
		if !slices.Contains(ClaudeEvents, event) {
			if !problem("%s.%s: not a Claude Code hook event; the events are %s", prefix, event, strings.Join(ClaudeEvents, ", ")) {
				return warnings, err
			}
			delete(c, event)
			continue
		}
		if !slices.Contains(Events, event) {
			never = append(never, prefix+"."+event)
		}
		var kept []Group
		for i, g := range c[event] {
			at := fmt.Sprintf("%s.%s[%d]", prefix, event, i)
			if _, cerr := compile(g.Matcher); cerr != nil {
				if !problem("%s.matcher: %v", at, cerr) {
					return warnings, err
				}
				continue
			}
			if len(g.Hooks) == 0 && !problem("%s.hooks: no hooks", at) {
				return warnings, err
			}
			var hooks []Hook
			for j, h := range g.Hooks {
				w, msg := checkHook(h, event)
				at := fmt.Sprintf("%s.hooks[%d]", at, j)
				if msg != "" {
					if !problem("%s%s", at, msg) {
						return warnings, err
					}
					continue
				}
				if w != "" {
					warnings = append(warnings, at+w)
					h.skip = true
				}
				hooks = append(hooks, h)
			}
			if len(hooks) > 0 {
				g.Hooks = hooks
				kept = append(kept, g)
			}
		}
		c[event] = kept
	}
	return warnings, nil
}

// checkHook returns a warning (the hook is accepted and never runs) or a problem (its path
// suffix and what is wrong).
func checkHook(h Hook, event string) (warning, problem string) {
	switch {
	case !slices.Contains(handlerTypes, h.Type):
		return "", fmt.Sprintf(".type: %q is not a hook type; use \"command\" (Claude Code also knows %s)", h.Type, strings.Join(handlerTypes[1:], ", "))
	case h.Type != "command":
		return fmt.Sprintf(": hooks of type %q are accepted, never run: rein runs hooks of type \"command\"", h.Type), ""
	case strings.TrimSpace(h.Command) == "":
		return "", ".command: empty"
	case h.Timeout < 0 || math.IsInf(h.Timeout, 0) || math.IsNaN(h.Timeout) || h.Timeout > 24*3600:
		return "", fmt.Sprintf(".timeout: %v is not a number of seconds between 0 and 86400", h.Timeout)
	case h.Shell != "" && h.Shell != "bash" && h.Shell != "powershell":
		return "", fmt.Sprintf(".shell: %q is not \"bash\" or \"powershell\"", h.Shell)
	case h.Shell == "powershell" && len(h.Args) == 0:
		return ": PowerShell hooks are accepted, never run: rein runs commands with sh", ""
	}
	if h.If != "" {
		if _, err := parseIf(h.If); err != nil {
			return "", ".if: " + err.Error()
		}
	}
	if h.Once {
		return ": \"once\" belongs to skill frontmatter; in settings the hook runs every time", ""
	}
	return "", ""
}

// Label names every hook of c after its position, under scope ("global", "project",
// "claude-project"…).
func (c Config) Label(scope string) {
	for event, groups := range c {
		for i := range groups {
			for j := range groups[i].Hooks {
				groups[i].Hooks[j].name = fmt.Sprintf("%s:%s[%d].hooks[%d]", scope, event, i, j)
			}
		}
	}
}

// PluginRoot marks every hook of c as a plugin's, run with CLAUDE_PLUGIN_ROOT set to root
// and "${CLAUDE_PLUGIN_ROOT}" replaced by it in the command and its arguments.
func (c Config) PluginRoot(root string) {
	for _, groups := range c {
		for i := range groups {
			for j := range groups[i].Hooks {
				groups[i].Hooks[j].pluginRoot = root
			}
		}
	}
}

// PluginData gives every hook of c the plugin's persistent data directory dir: run with
// CLAUDE_PLUGIN_DATA set to it and "${CLAUDE_PLUGIN_DATA}" replaced by it in the command and
// its arguments; the directory is created (0700) before such a hook runs.
func (c Config) PluginData(dir string) {
	for _, groups := range c {
		for i := range groups {
			for j := range groups[i].Hooks {
				groups[i].Hooks[j].pluginData = dir
			}
		}
	}
}

// Merge returns the groups of each config in turn, event by event: rein's own settings
// first, then Claude Code's. A command hook identical to one an earlier group of the event
// holds (same matcher, command, arguments and fail mode) is left out, as Claude Code runs an
// identical handler once; plugin hooks are never merged away.
func Merge(cs ...Config) Config {
	out := Config{}
	type key struct{ event, matcher, command, args string }
	seen := map[key]bool{}
	for _, c := range cs {
		for _, event := range sortedEvents(c) {
			for _, g := range c[event] {
				var hooks []Hook
				for _, h := range g.Hooks {
					k := key{event, g.Matcher, h.Type + "\x00" + h.Command, strings.Join(h.Args, "\x00") + fmt.Sprint(h.FailClosed, h.Async, h.If)}
					if h.pluginRoot == "" && seen[k] {
						continue
					}
					seen[k] = true
					hooks = append(hooks, h)
				}
				if len(hooks) > 0 {
					out[event] = append(out[event], Group{Matcher: g.Matcher, Hooks: hooks})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// compile turns a matcher into a predicate over names, as Claude Code reads matchers: "",
// "*" and none match everything (nil); one made only of letters, digits, "_", "-", spaces,
// "," and "|" is an exact name or a list of them ("Edit|Write", "Edit, Write"); anything
// else is a regular expression that must match the whole name (RE2; rein anchors it, where
// Claude Code's JavaScript expressions are unanchored: write "Edit.*" to match names
// starting with Edit).
func compile(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	if exactList.MatchString(m) {
		var names []string
		for _, n := range strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' }) {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, regexp.QuoteMeta(n))
			}
		}
		return regexp.Compile("^(?:" + strings.Join(names, "|") + ")$")
	}
	if _, err := regexp.Compile(m); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// exactList matches a matcher that is a name or a list of names.
var exactList = lazyre.Regexp{Expr: `^[A-Za-z0-9_\-, |]+$`}

func sortedEvents(c Config) []string {
	var out []string
	for e := range c {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// Skipped reports whether the hook is accepted but never runs ([Config.Check] warned why).
func (h Hook) Skipped() bool { return h.skip }
