package command

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The events rein runs command hooks for, named as Claude Code names them.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	SessionStart     = "SessionStart"
	SessionEnd       = "SessionEnd"
	Stop             = "Stop"
	PreCompact       = "PreCompact"
)

// Events lists the supported events.
var Events = []string{PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, SessionEnd, Stop, PreCompact}

// DefaultTimeout bounds a command whose hook sets no timeout (Claude Code's default).
const DefaultTimeout = 60 * time.Second

// Config is the "hooks" member of a settings file, in Claude Code's shape: an event name maps
// to matcher groups, each naming the commands to run when its matcher matches.
//
//	{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]}]}
type Config map[string][]Group

// Group is one matcher and its hooks.
type Group struct {
	// Matcher is a regular expression (RE2) that must match the whole tool name (PreToolUse,
	// PostToolUse; Claude Code's name or rein's, see the README), the trigger (PreCompact:
	// manual, auto), the source (SessionStart: startup, resume) or the reason (SessionEnd).
	// "" and "*" match everything. Ignored for UserPromptSubmit and Stop.
	Matcher string `json:"matcher,omitempty"`
	Hooks   []Hook `json:"hooks"`
}

// Hook is one command.
type Hook struct {
	// Type must be "command".
	Type string `json:"type"`
	// Command is run with sh -c in the project directory, the event's JSON on stdin.
	Command string `json:"command"`
	// Timeout in seconds; 0 means DefaultTimeout. The command's process group is killed when
	// it runs out.
	Timeout float64 `json:"timeout,omitempty"`
	// FailClosed (a rein extension) makes a failing command — another exit status than 0 and
	// 2, a timeout, output that is not a valid answer — refuse what its event guards instead
	// of being ignored (the default: fail open).
	FailClosed bool `json:"failClosed,omitempty"`

	// name says where the hook was configured, for records: "project:PreToolUse[0].hooks[1]".
	name string
}

// Name returns where the hook was configured ("" before [Config.Label]).
func (h Hook) Name() string { return h.name }

// timeout returns the hook's timeout.
func (h Hook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(h.Timeout * float64(time.Second))
}

// Check reports the first problem of c, naming its path under prefix ("hooks").
func (c Config) Check(prefix string) error {
	for _, event := range sortedEvents(c) {
		if !slices.Contains(Events, event) {
			return fmt.Errorf("%s.%s: rein runs no hooks for this event; it runs %s", prefix, event, strings.Join(Events, ", "))
		}
		for i, g := range c[event] {
			at := fmt.Sprintf("%s.%s[%d]", prefix, event, i)
			if _, err := compile(g.Matcher); err != nil {
				return fmt.Errorf("%s.matcher: %w", at, err)
			}
			if len(g.Hooks) == 0 {
				return fmt.Errorf("%s.hooks: no hooks", at)
			}
			for j, h := range g.Hooks {
				at := fmt.Sprintf("%s.hooks[%d]", at, j)
				switch {
				case h.Type != "command":
					return fmt.Errorf("%s.type: %q is not supported; rein runs hooks of type \"command\"", at, h.Type)
				case strings.TrimSpace(h.Command) == "":
					return fmt.Errorf("%s.command: empty", at)
				case h.Timeout < 0 || math.IsInf(h.Timeout, 0) || math.IsNaN(h.Timeout) || h.Timeout > 24*3600:
					return fmt.Errorf("%s.timeout: %v is not a number of seconds between 0 and 86400", at, h.Timeout)
				}
			}
		}
	}
	return nil
}

// Label names every hook of c after its position, under scope ("global", "project").
func (c Config) Label(scope string) {
	for event, groups := range c {
		for i := range groups {
			for j := range groups[i].Hooks {
				groups[i].Hooks[j].name = fmt.Sprintf("%s:%s[%d].hooks[%d]", scope, event, i, j)
			}
		}
	}
}

// Merge returns the groups of a followed by those of b, event by event: global settings first,
// then the project's.
func Merge(a, b Config) Config {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := Config{}
	for _, c := range []Config{a, b} {
		for event, groups := range c {
			out[event] = append(out[event], groups...)
		}
	}
	return out
}

// compile turns a matcher into a regexp matching whole names; nil matches everything.
func compile(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	if _, err := regexp.Compile(m); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + m + ")$")
}

func sortedEvents(c Config) []string {
	var out []string
	for e := range c {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}
