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

	// PreToolUse, PostToolUse, PostToolUseFailure.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	// PostToolUseFailure.
	Error       string `json:"error,omitempty"`
	IsInterrupt *bool  `json:"is_interrupt,omitempty"`
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
	// Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
	// Stop.
	StopHookActive       *bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage *string `json:"last_assistant_message,omitempty"`
}

// output is the JSON a command may print on stdout (exit status 0): the fields Claude Code
// documents, and only those. Fields rein does not act on are accepted and ignored.
type output struct {
	Continue         *bool     `json:"continue"`
	StopReason       string    `json:"stopReason"`
	SuppressOutput   bool      `json:"suppressOutput"`
	SystemMessage    string    `json:"systemMessage"`
	TerminalSequence string    `json:"terminalSequence"`
	Decision         string    `json:"decision"`
	Reason           string    `json:"reason"`
	Specific         *specific `json:"hookSpecificOutput"`
	// Async, AsyncTimeout: the in-band async answer (see [asyncMarker]).
	Async        bool    `json:"async"`
	AsyncTimeout float64 `json:"asyncTimeout"`
}

type specific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Accepted, not acted on (events rein does not fire, or features it lacks).
	UpdatedToolOutput      json.RawMessage `json:"updatedToolOutput"`
	UpdatedMCPToolOutput   json.RawMessage `json:"updatedMCPToolOutput"`
	ClassifierContext      json.RawMessage `json:"classifierContext"`
	InitialUserMessage     json.RawMessage `json:"initialUserMessage"`
	SessionTitle           json.RawMessage `json:"sessionTitle"`
	WatchPaths             json.RawMessage `json:"watchPaths"`
	ReloadSkills           json.RawMessage `json:"reloadSkills"`
	SuppressOriginalPrompt json.RawMessage `json:"suppressOriginalPrompt"`
	Retry                  json.RawMessage `json:"retry"`
	Decision               json.RawMessage `json:"decision"`
	Action                 json.RawMessage `json:"action"`
	Content                json.RawMessage `json:"content"`
	DisplayContent         json.RawMessage `json:"displayContent"`
}

// maxOutputBytes bounds what is read of a command's stdout and of its stderr.
const maxOutputBytes = 1 << 20

// parseOutput reads a command's stdout for event as Claude Code does. It returns nil for
// output that is empty, plain text (not starting with "{"), or not valid JSON — Claude Code
// treats all of those as plain text (a JSON object followed by more text included) — unless
// strict (a fail-closed hook), where JSON that does not parse is an error. A JSON object
// must hold only documented fields, each of the right type; notes name the fields present
// that do not apply to the event (they are ignored).
func parseOutput(event string, stdout []byte, strict bool) (o *output, notes []string, err error) {
	t := bytes.TrimSpace(stdout)
	if len(t) == 0 || t[0] != '{' {
		return nil, nil, nil
	}
	if err := strictjson.Check(t); err != nil {
		if strict {
			return nil, nil, err
		}
		return nil, nil, nil
	}
	o = &output{}
	if err := (strictjson.Options{MaxDocumentBytes: maxOutputBytes}).Unmarshal(t, o); err != nil {
		return nil, nil, err
	}
	allowed := map[string][]string{
		PreToolUse:         {"approve", "block"},
		PostToolUse:        {"block"},
		PostToolUseFailure: {"block"},
		UserPromptSubmit:   {"block"},
		Stop:               {"block"},
		PreCompact:         {"block"},
	}[event]
	if o.Decision != "" && !slices.Contains(allowed, o.Decision) {
		return nil, nil, fmt.Errorf("decision: %q is not a decision of %s (allowed: %s)", o.Decision, event, listOr(allowed))
	}
	if o.Decision == "block" && event == Stop && strings.TrimSpace(o.Reason) == "" {
		return nil, nil, fmt.Errorf("reason: a Stop hook that blocks must say why (the model reads it)")
	}
	if s := o.Specific; s != nil {
		if s.HookEventName != event {
			return nil, nil, fmt.Errorf("hookSpecificOutput.hookEventName: %q, want %q", s.HookEventName, event)
		}
		if event != PreToolUse && (s.PermissionDecision != "" || s.PermissionDecisionReason != "" || s.UpdatedInput != nil) {
			notes = append(notes, "permissionDecision, permissionDecisionReason and updatedInput belong to PreToolUse; ignored")
			s.PermissionDecision, s.PermissionDecisionReason, s.UpdatedInput = "", "", nil
		}
		switch s.PermissionDecision {
		case "", "allow", "deny", "ask", "defer":
		default:
			return nil, nil, fmt.Errorf("hookSpecificOutput.permissionDecision: %q is not allow, deny, ask or defer", s.PermissionDecision)
		}
		if s.UpdatedInput != nil && !bytes.HasPrefix(bytes.TrimSpace(s.UpdatedInput), []byte("{")) {
			return nil, nil, fmt.Errorf("hookSpecificOutput.updatedInput: not an object")
		}
		for name, v := range map[string]json.RawMessage{"updatedToolOutput": s.UpdatedToolOutput, "updatedMCPToolOutput": s.UpdatedMCPToolOutput,
			"classifierContext": s.ClassifierContext, "initialUserMessage": s.InitialUserMessage, "sessionTitle": s.SessionTitle,
			"watchPaths": s.WatchPaths, "reloadSkills": s.ReloadSkills, "suppressOriginalPrompt": s.SuppressOriginalPrompt,
			"retry": s.Retry, "decision": s.Decision, "action": s.Action, "content": s.Content, "displayContent": s.DisplayContent} {
			if v != nil {
				notes = append(notes, "hookSpecificOutput."+name+" is not supported by rein; ignored")
			}
		}
		slices.Sort(notes)
	}
	return o, notes, nil
}

// asyncMarker reports whether line (a command's first line of stdout) is Claude Code's
// in-band async answer, {"async": true, …}: the command then goes on in the background.
func asyncMarker(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' || strictjson.Check(t) != nil {
		return false
	}
	var m struct {
		Async bool `json:"async"`
	}
	return json.Unmarshal(t, &m) == nil && m.Async
}

func listOr(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// Tool names: rein's tools as Claude Code names its own. A tool not listed keeps its name and
// its arguments as rein has them. An edit with several replacements is Claude Code's
// MultiEdit (see [hookToolName]).
func claudeNames(tool string) (string, bool) {
	switch tool {
	case "read":
		return "Read", true
	case "write":
		return "Write", true
	case "edit":
		return "Edit", true
	case "bash":
		return "Bash", true
	case "grep":
		return "Grep", true
	case "find":
		return "Glob", true
	case "ls":
		return "LS", true
	}
	return "", false
}

// ClaudeName returns the name hooks see for a rein tool.
func ClaudeName(tool string) string {
	if n, ok := claudeNames(tool); ok {
		return n
	}
	return tool
}

// hookToolName is the tool_name of a call with rein's arguments raw: MultiEdit for an edit
// of more than one replacement, else [ClaudeName].
func hookToolName(tool string, raw json.RawMessage) string {
	if tool == "edit" {
		var a struct {
			Edits []json.RawMessage `json:"edits"`
		}
		if json.Unmarshal(raw, &a) == nil && len(a.Edits) > 1 {
			return "MultiEdit"
		}
	}
	return ClaudeName(tool)
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
	if _, ok := claudeNames(tool); !ok {
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
				list = append(list, args{"old_string": e["oldText"], "new_string": e["newText"], "replace_all": false})
			}
			out["edits"] = list
		}
	case "bash":
		copyIf("command", "command")
		copyIf("description", "description")
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
	if _, ok := claudeNames(tool); !ok {
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
			"description": to("description"),
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

// toolResponse is the tool_response of PostToolUse in the shape Claude Code gives each tool
// (Bash: stdout, stderr, interrupted, isImage; Write and Edit: filePath, success and the
// change; Read: type and file), plus rein's own fields: output (the result's text), isError
// and details (rein's details of the result). rein's bash merges stderr into stdout.
func toolResponse(tool string, toolInput json.RawMessage, res *llm.Message) json.RawMessage {
	text := res.Text()
	r := map[string]any{"output": text, "isError": res.IsError}
	var in map[string]any
	_ = json.Unmarshal(toolInput, &in)
	if p, ok := in["file_path"]; ok {
		r["filePath"] = p
	}
	switch tool {
	case "bash":
		var d struct {
			TimedOut bool `json:"timedOut"`
			Aborted  bool `json:"aborted"`
		}
		_ = json.Unmarshal(res.Details, &d)
		r["stdout"], r["stderr"], r["interrupted"], r["isImage"] = text, "", d.TimedOut || d.Aborted, false
	case "write":
		r["success"], r["content"] = !res.IsError, in["content"]
	case "edit":
		r["success"] = !res.IsError
		if edits, ok := in["edits"]; ok {
			r["edits"] = edits
		} else {
			r["oldString"], r["newString"], r["replaceAll"] = in["old_string"], in["new_string"], false
		}
	case "read":
		start := 1
		if n, ok := number(in["offset"]); ok && n > 0 {
			start = int(n)
		}
		lines := strings.Count(text, "\n")
		if text != "" && !strings.HasSuffix(text, "\n") {
			lines++
		}
		r["type"] = "text"
		r["file"] = map[string]any{"filePath": in["file_path"], "content": text, "numLines": lines, "startLine": start}
	}
	if len(res.Details) > 0 {
		r["details"] = res.Details
	}
	b, _ := json.Marshal(r)
	return b
}

// failureText is PostToolUseFailure's error: the result's text, after "Exit code N" for a
// bash command that exited with a status, as Claude Code writes it.
func failureText(tool string, res *llm.Message) (text string, interrupted bool) {
	text = res.Text()
	if tool != "bash" {
		return text, false
	}
	var d struct {
		ExitCode *int `json:"exitCode"`
		TimedOut bool `json:"timedOut"`
		Aborted  bool `json:"aborted"`
	}
	_ = json.Unmarshal(res.Details, &d)
	if d.ExitCode != nil {
		text = fmt.Sprintf("Exit code %d\n%s", *d.ExitCode, text)
	}
	return text, d.TimedOut || d.Aborted
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
