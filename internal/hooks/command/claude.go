package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/strictjson"
)

// input is the JSON a command reads on stdin: Claude Code's common fields, then the event's.
type input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`

	// PreToolUse, PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	// UserPromptSubmit.
	Prompt *string `json:"prompt,omitempty"`
	// SessionStart.
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
	// SessionEnd.
	Reason string `json:"reason,omitempty"`
	// PreCompact.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	// Stop.
	StopHookActive       *bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage *string `json:"last_assistant_message,omitempty"`
}

// output is the JSON a command may print on stdout (exit status 0): Claude Code's documented
// fields, and only those.
type output struct {
	Continue       *bool     `json:"continue"`
	StopReason     string    `json:"stopReason"`
	SuppressOutput bool      `json:"suppressOutput"`
	SystemMessage  string    `json:"systemMessage"`
	Decision       string    `json:"decision"`
	Reason         string    `json:"reason"`
	Specific       *specific `json:"hookSpecificOutput"`
}

type specific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
}

// maxOutputBytes bounds what is read of a command's stdout and of its stderr.
const maxOutputBytes = 1 << 20

// parseOutput reads a command's stdout strictly for event. It returns nil for output that is
// empty or plain text (not starting with "{"); JSON must be one object of the documented fields
// that make sense for the event.
func parseOutput(event string, stdout []byte) (*output, error) {
	t := bytes.TrimSpace(stdout)
	if len(t) == 0 || t[0] != '{' {
		return nil, nil
	}
	var o output
	if err := (strictjson.Options{MaxDocumentBytes: maxOutputBytes}).Unmarshal(t, &o); err != nil {
		return nil, err
	}
	allowed := map[string][]string{
		PreToolUse:       {"approve", "block"},
		PostToolUse:      {"block"},
		UserPromptSubmit: {"block"},
		Stop:             {"block"},
	}[event]
	if o.Decision != "" && !slices.Contains(allowed, o.Decision) {
		return nil, fmt.Errorf("decision: %q is not a decision of %s (allowed: %s)", o.Decision, event, listOr(allowed))
	}
	if o.Decision == "block" && event == Stop && strings.TrimSpace(o.Reason) == "" {
		return nil, fmt.Errorf("reason: a Stop hook that blocks must say why (the model reads it)")
	}
	if s := o.Specific; s != nil {
		if s.HookEventName != event {
			return nil, fmt.Errorf("hookSpecificOutput.hookEventName: %q, want %q", s.HookEventName, event)
		}
		if event != PreToolUse && (s.PermissionDecision != "" || s.PermissionDecisionReason != "" || s.UpdatedInput != nil) {
			return nil, fmt.Errorf("hookSpecificOutput: permissionDecision, permissionDecisionReason and updatedInput belong to PreToolUse, not %s", event)
		}
		switch event {
		case PreToolUse, PostToolUse, UserPromptSubmit, SessionStart:
		default:
			return nil, fmt.Errorf("hookSpecificOutput: %s has no hook-specific output", event)
		}
		switch s.PermissionDecision {
		case "", "allow", "deny", "ask":
		default:
			return nil, fmt.Errorf("hookSpecificOutput.permissionDecision: %q is not allow, deny or ask", s.PermissionDecision)
		}
		if s.UpdatedInput != nil && !bytes.HasPrefix(bytes.TrimSpace(s.UpdatedInput), []byte("{")) {
			return nil, fmt.Errorf("hookSpecificOutput.updatedInput: not an object")
		}
	}
	return &o, nil
}

func listOr(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// Tool names: rein's tools as Claude Code names its own. A tool not listed keeps its name and
// its arguments as rein has them.
var claudeNames = map[string]string{
	"read": "Read", "write": "Write", "edit": "Edit", "bash": "Bash",
	"grep": "Grep", "find": "Glob", "ls": "LS",
}

// ClaudeName returns the name hooks see for a rein tool.
func ClaudeName(tool string) string {
	if n, ok := claudeNames[tool]; ok {
		return n
	}
	return tool
}

// args is a decoded argument object.
type args = map[string]any

func decodeObject(raw []byte) (args, error) {
	v, err := strictjson.Decode(string(raw))
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

// toClaude turns a rein call's validated arguments into Claude Code's tool_input: file paths
// absolute (against cwd), field names Claude Code's.
func toClaude(tool string, raw json.RawMessage, cwd string) (json.RawMessage, error) {
	if _, ok := claudeNames[tool]; !ok {
		return raw, nil
	}
	a, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	abs := func(p any) string {
		s, _ := p.(string)
		if s == "" {
			s = "."
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(cwd, s)
		}
		return s
	}
	out := args{}
	copyIf := func(from, to string) {
		if v, ok := a[from]; ok {
			out[to] = v
		}
	}
	switch tool {
	case "read":
		out["file_path"] = abs(a["path"])
		copyIf("offset", "offset")
		copyIf("limit", "limit")
	case "write":
		out["file_path"] = abs(a["path"])
		copyIf("content", "content")
	case "edit":
		out["file_path"] = abs(a["path"])
		edits, _ := a["edits"].([]any)
		if len(edits) == 1 {
			e, _ := edits[0].(map[string]any)
			out["old_string"], out["new_string"], out["replace_all"] = e["oldText"], e["newText"], false
		} else {
			var list []any
			for _, x := range edits {
				e, _ := x.(map[string]any)
				list = append(list, args{"old_string": e["oldText"], "new_string": e["newText"]})
			}
			out["edits"] = list
		}
	case "bash":
		copyIf("command", "command")
		if t, ok := number(a["timeout"]); ok {
			out["timeout"] = int64(math.Round(t * 1000)) // Claude Code counts milliseconds
		}
	case "grep":
		copyIf("pattern", "pattern")
		if _, ok := a["path"]; ok {
			out["path"] = abs(a["path"])
		}
		copyIf("glob", "glob")
		copyIf("ignoreCase", "-i")
		copyIf("context", "-C")
		copyIf("limit", "head_limit")
		copyIf("literal", "literal")
		out["output_mode"] = "content"
	case "find":
		copyIf("pattern", "pattern")
		if _, ok := a["path"]; ok {
			out["path"] = abs(a["path"])
		}
		copyIf("limit", "limit")
	case "ls":
		out["path"] = abs(a["path"])
		copyIf("limit", "limit")
	}
	return json.Marshal(out)
}

// fromClaude turns a hook's updatedInput back into rein's arguments for tool. Fields rein
// cannot honour are errors; the kernel validates the result against the tool's schema.
func fromClaude(tool string, raw json.RawMessage, cwd string) (json.RawMessage, error) {
	if _, ok := claudeNames[tool]; !ok {
		return raw, nil
	}
	in, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	out := args{}
	var problems []string
	rel := func(v any) any {
		s, ok := v.(string)
		if !ok || !filepath.IsAbs(s) {
			return v
		}
		if r, err := filepath.Rel(cwd, s); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
		return s
	}
	known := map[string]func(v any){}
	var oldText, newText any // edit: a single replacement
	var single bool
	to := func(name string) func(any) { return func(v any) { out[name] = v } }
	switch tool {
	case "read":
		known = map[string]func(any){"file_path": func(v any) { out["path"] = rel(v) }, "offset": to("offset"), "limit": to("limit")}
	case "write":
		known = map[string]func(any){"file_path": func(v any) { out["path"] = rel(v) }, "content": to("content")}
	case "edit":
		known = map[string]func(any){
			"file_path":  func(v any) { out["path"] = rel(v) },
			"old_string": func(v any) { oldText, single = v, true },
			"new_string": func(v any) { newText, single = v, true },
			"replace_all": func(v any) {
				if v != false {
					problems = append(problems, "replace_all: rein's edit replaces exactly one occurrence of each old text")
				}
			},
			"edits": func(v any) {
				list, _ := v.([]any)
				var edits []any
				for i, x := range list {
					e, _ := x.(map[string]any)
					for k := range e {
						if k != "old_string" && k != "new_string" && (k != "replace_all" || e[k] != false) {
							problems = append(problems, fmt.Sprintf("edits[%d].%s: not supported", i, k))
						}
					}
					edits = append(edits, args{"oldText": e["old_string"], "newText": e["new_string"]})
				}
				out["edits"] = edits
			},
		}
	case "bash":
		known = map[string]func(any){
			"command":     to("command"),
			"description": func(any) {},
			"timeout": func(v any) {
				if ms, ok := number(v); ok {
					out["timeout"] = ms / 1000
				} else {
					out["timeout"] = v
				}
			},
			"run_in_background": func(v any) {
				if v != false {
					problems = append(problems, "run_in_background: rein's bash runs commands in the foreground")
				}
			},
		}
	case "grep":
		known = map[string]func(any){"pattern": to("pattern"), "path": func(v any) { out["path"] = rel(v) }, "glob": to("glob"),
			"-i": to("ignoreCase"), "-C": to("context"), "head_limit": to("limit"), "literal": to("literal"),
			"output_mode": func(v any) {
				if v != "content" {
					problems = append(problems, fmt.Sprintf("output_mode: rein's grep shows matching lines (content), not %v", v))
				}
			}}
	case "find":
		known = map[string]func(any){"pattern": to("pattern"), "path": func(v any) { out["path"] = rel(v) }, "limit": to("limit")}
	case "ls":
		known = map[string]func(any){"path": func(v any) { out["path"] = rel(v) }, "limit": to("limit")}
	}
	if err := func() error {
		for _, k := range sortedKeys(in) {
			f, ok := known[k]
			if !ok {
				return fmt.Errorf("updatedInput.%s: %s has no such field", k, ClaudeName(tool))
			}
			f(in[k])
		}
		return nil
	}(); err != nil {
		return nil, err
	}
	if single {
		if _, both := in["edits"]; both {
			return nil, fmt.Errorf("updatedInput: give either old_string/new_string or edits, not both")
		}
		out["edits"] = []any{args{"oldText": oldText, "newText": newText}}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("updatedInput: %s", strings.Join(problems, "; "))
	}
	return json.Marshal(out)
}

// toolResponse is the tool_response of PostToolUse: the result's text, whether it is an error,
// the file a file tool worked on, and rein's details of the result.
func toolResponse(tool string, toolInput json.RawMessage, res *llm.Message) json.RawMessage {
	r := map[string]any{"output": res.Text(), "isError": res.IsError}
	if tool == "bash" {
		r["stdout"] = res.Text()
	}
	var in map[string]any
	if json.Unmarshal(toolInput, &in) == nil {
		if p, ok := in["file_path"]; ok {
			r["filePath"] = p
		}
	}
	if len(res.Details) > 0 {
		r["details"] = res.Details
	}
	b, _ := json.Marshal(r)
	return b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// sortedKeys makes errors deterministic: the first unknown key in sorted order.
func sortedKeys(m map[string]any) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}
