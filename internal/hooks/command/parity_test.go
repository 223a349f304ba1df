package command_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/llm"
)

// TestPostToolUseFailureAndResponseShapes: a failed call fires PostToolUseFailure (not
// PostToolUse) with Claude Code's error text; a successful one PostToolUse with Claude Code's
// tool_response shape.
func TestPostToolUseFailureAndResponseShapes(t *testing.T) {
	settings := `{"PostToolUse": [{"hooks": [{"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/ok.json\""}]}],
	  "PostToolUseFailure": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/failed.json\"; echo 'try make check' >&2; exit 2"}]}]}`
	f := newFixture(t, nil, settings)
	args := json.RawMessage(`{"command":"make test","description":"run the tests"}`)
	call := &llm.ToolCall{ID: "call_1", Name: "bash"}
	failed := &llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.Text("boom")}, IsError: true, Details: json.RawMessage(`{"exitCode":3}`)}
	ev := &hooks.AfterTool{Call: call, Args: args, Result: failed}
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	in := f.input("failed.json")
	if in["hook_event_name"] != "PostToolUseFailure" || in["error"] != "Exit code 3\nboom" || in["tool_response"] != nil {
		t.Errorf("PostToolUseFailure input %v", in)
	}
	if ti := in["tool_input"].(map[string]any); ti["description"] != "run the tests" {
		t.Errorf("tool_input %v", ti)
	}
	if !strings.Contains(ev.Result.Text(), "PostToolUseFailure hook feedback:\ntry make check") {
		t.Errorf("result %q", ev.Result.Text())
	}
	if _, err := os.Stat(filepath.Join(f.dir, "ok.json")); err == nil {
		t.Error("PostToolUse ran for a failed call")
	}

	ok := &llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.Text("PASS\n")}, Details: json.RawMessage(`{"exitCode":0}`)}
	if err := f.reg.Run(context.Background(), &hooks.AfterTool{Call: call, Args: args, Result: ok}); err != nil {
		t.Fatal(err)
	}
	resp := f.input("ok.json")["tool_response"].(map[string]any)
	if resp["stdout"] != "PASS\n" || resp["stderr"] != "" || resp["interrupted"] != false || resp["isImage"] != false {
		t.Errorf("Bash tool_response %v", resp)
	}

	// A multi-edit is MultiEdit, with edits[]; its response says it succeeded.
	edit := json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":"d"}]}`)
	res := &llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.Text("edited")}}
	if err := f.reg.Run(context.Background(), &hooks.AfterTool{Call: &llm.ToolCall{ID: "c2", Name: "edit"}, Args: edit, Result: res}); err != nil {
		t.Fatal(err)
	}
	in = f.input("ok.json")
	resp = in["tool_response"].(map[string]any)
	if in["tool_name"] != "MultiEdit" || resp["success"] != true || resp["filePath"] != filepath.Join(f.dir, "a.txt") || len(resp["edits"].([]any)) != 2 {
		t.Errorf("MultiEdit input %v", in)
	}
}

// TestOutputsAsClaudeCodeReadsThem: JSON followed by other text is plain text (no decision);
// a first line {"async": true} sends the command to the background and what it prints after
// reaches the model with the next tool result; an "async" hook never decides.
func TestOutputsAsClaudeCodeReadsThem(t *testing.T) {
	f := newFixture(t, map[string]string{"h.sh": `cat >/dev/null
echo '{"decision": "block", "reason": "x"}'
echo 'and some debug text'
`}, preToolUse("Bash", cmd("h.sh", "")))
	ev := bashCall("ls")
	if err := f.reg.Run(context.Background(), ev); err != nil || ev.Block != nil {
		t.Fatalf("JSON with trailing text: err %v block %v", err, ev.Block)
	}

	f = newFixture(t, map[string]string{"slow.sh": `cat >/dev/null
echo '{"async": true, "asyncTimeout": 30000}'
sleep 0.3
echo '{"systemMessage": "index rebuilt", "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "the index is fresh"}}'
`, "deny.sh": `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}'
`}, `{"PreToolUse": [{"hooks": [{"type": "command", "command": "$DIR/slow.sh"}, {"type": "command", "command": "$DIR/deny.sh", "async": true}]}]}`)
	ev = bashCall("ls")
	if err := f.reg.Run(context.Background(), ev); err != nil || ev.Block != nil {
		t.Fatalf("async: err %v block %v (an async hook decides nothing)", err, ev.Block)
	}
	deadline := time.Now().Add(10 * time.Second)
	var text string
	for time.Now().Before(deadline) {
		res := &llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.Text("out")}}
		after := &hooks.AfterTool{Call: &llm.ToolCall{ID: "c", Name: "ls"}, Args: json.RawMessage(`{}`), Result: res}
		if err := f.reg.Run(context.Background(), after); err != nil {
			t.Fatal(err)
		}
		if text = after.Result.Text(); strings.Contains(text, "Async hook output") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(text, "Async hook output:\nindex rebuilt\nthe index is fresh") {
		t.Errorf("async output never reached a tool result: %q", text)
	}
}

// TestIfAndPluginRoot: "if" narrows a hook to calls its rule matches; a plugin's hook gets
// CLAUDE_PLUGIN_ROOT, in its environment and substituted in its command.
func TestIfAndPluginRoot(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugins", "guard")
	os.MkdirAll(filepath.Join(plugin, "hooks"), 0o755)
	os.WriteFile(filepath.Join(plugin, "hooks", "g.sh"), []byte("#!/bin/sh\necho \"$CLAUDE_PLUGIN_ROOT\" >> \"$CLAUDE_PROJECT_DIR/ran\"\n"), 0o755)
	cfg := command.Config{"PreToolUse": {{Matcher: "Bash", Hooks: []command.Hook{
		{Type: "command", Command: "${CLAUDE_PLUGIN_ROOT}/hooks/g.sh", If: "Bash(git push:*)"}}}}}
	if _, err := cfg.Check("hooks", false); err != nil {
		t.Fatal(err)
	}
	cfg.PluginRoot(plugin)
	reg := hooks.New(hooks.Options{})
	r := &command.Runner{Config: cfg, Dir: dir}
	if err := r.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"git status", "git push origin main", "git push"} {
		if err := reg.Run(context.Background(), bashCall(c)); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "ran"))
	if string(data) != plugin+"\n"+plugin+"\n" {
		t.Errorf("ran %q, want the two pushes with CLAUDE_PLUGIN_ROOT=%s", data, plugin)
	}
}
