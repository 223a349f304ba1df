package command_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/hooks/command"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/strictjson"
	"github.com/reinhq/rein/internal/tool"
)

// fixture is a project directory with hook scripts, a runner over a settings "hooks" value,
// and the hook runs reported.
type fixture struct {
	t      *testing.T
	dir    string
	reg    *hooks.Registry
	runner *command.Runner
	mu     sync.Mutex
	runs   []hooks.Run
	notes  []string
}

// newFixture writes scripts (name → body; "#!/bin/sh" is added) into a fresh project directory
// and registers the hooks of settings (JSON; "$DIR" stands for that directory).
func newFixture(t *testing.T, scripts map[string]string, settings string) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var cfg command.Config
	if err := strictjson.Unmarshal([]byte(strings.ReplaceAll(settings, "$DIR", f.dir)), &cfg); err != nil {
		t.Fatalf("settings: %v", err)
	}
	if _, err := cfg.Check("hooks", false); err != nil {
		t.Fatalf("settings: %v", err)
	}
	cfg.Label("project")
	f.reg = hooks.New(hooks.Options{Report: func(r hooks.Run) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.runs = append(f.runs, r)
	}})
	f.runner = &command.Runner{Config: cfg, Dir: f.dir, SessionID: "s1", TranscriptPath: "/sessions/s1/ledger.jsonl",
		Notice: func(s string) { f.mu.Lock(); f.notes = append(f.notes, s); f.mu.Unlock() }}
	if err := f.runner.Register(f.reg); err != nil {
		t.Fatal(err)
	}
	return f
}

// input returns the JSON a script saved with `cat > in.json`.
func (f *fixture) input(name string) map[string]any {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatalf("the hook saved no input: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		f.t.Fatalf("input %s: %v", data, err)
	}
	return m
}

func (f *fixture) outcomes() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.runs {
		s := fmt.Sprintf("%s=%s", r.Hook, r.Outcome)
		if r.Detail != "" {
			s += "(" + r.Detail + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

var bashSpec = tool.Spec{Name: "bash", Schema: json.RawMessage(`{"type":"object"}`)}

func bashCall(command string) *hooks.BeforeTool {
	args, _ := json.Marshal(map[string]any{"command": command})
	return &hooks.BeforeTool{Turn: 1, Call: &llm.ToolCall{ID: "call_1", Name: "bash", Arguments: string(args)}, Spec: bashSpec, Args: args}
}

func preToolUse(matcher string, hook string) string {
	return fmt.Sprintf(`{"PreToolUse": [{"matcher": %q, "hooks": [%s]}]}`, matcher, hook)
}

func cmd(script string, extra string) string {
	return fmt.Sprintf(`{"type": "command", "command": "$DIR/%s"%s}`, script, extra)
}

func TestPreToolUseBlocksWithExitTwo(t *testing.T) {
	f := newFixture(t, map[string]string{"guard.sh": `cat > "$CLAUDE_PROJECT_DIR/in.json"
echo "rm is not allowed here" >&2
exit 2
`}, preToolUse("Bash", cmd("guard.sh", "")))
	ev := bashCall("rm -rf build")
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if ev.Block == nil || ev.Block.Error() != "Blocked by a PreToolUse hook: rm is not allowed here" {
		t.Fatalf("Block = %v", ev.Block)
	}
	in := f.input("in.json")
	want := map[string]any{"session_id": "s1", "transcript_path": "/sessions/s1/ledger.jsonl", "cwd": f.dir,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "call_1",
		"tool_input": map[string]any{"command": "rm -rf build"}}
	if fmt.Sprint(in) != fmt.Sprint(want) {
		t.Errorf("input\n got %v\nwant %v", in, want)
	}
	if got := f.outcomes(); got != "project:PreToolUse[0].hooks[0]=blocked" {
		t.Errorf("runs %s", got)
	}
}

func TestPreToolUseAllowsAndDecides(t *testing.T) {
	for _, tc := range []struct {
		name, stdout, block string
	}{
		{"silent", ``, ""},
		{"plain text is not an answer", `checked ok`, ""},
		{"allow", `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine"}}`, ""},
		{"deny", `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "use the make target"}}`,
			"Blocked by a PreToolUse hook: use the make target"},
		{"deprecated block", `{"decision": "block", "reason": "old style"}`, "Blocked by a PreToolUse hook: old style"},
		{"deprecated approve", `{"decision": "approve", "reason": "ok", "suppressOutput": true}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"h.sh": "cat >/dev/null\ncat <<'EOF'\n" + tc.stdout + "\nEOF\n"}, preToolUse("", cmd("h.sh", "")))
			ev := bashCall("make test")
			if err := f.reg.Run(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			got := ""
			if ev.Block != nil {
				got = ev.Block.Error()
			}
			if got != tc.block || string(ev.Args) != `{"command":"make test"}` {
				t.Errorf("block %q args %s; want block %q, args unchanged", got, ev.Args, tc.block)
			}
		})
	}
}

func TestPreToolUseAskWithoutATerminalNeedsApproval(t *testing.T) {
	f := newFixture(t, map[string]string{"h.sh": `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "deploys need a human"}}'
`}, preToolUse("Bash", cmd("h.sh", "")))
	ev := bashCall("./deploy")
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(ev.Block, kernel.ErrNeedsApproval) || !strings.Contains(ev.Block.Error(), "deploys need a human") {
		t.Errorf("Block = %v, want a refusal matching ErrNeedsApproval", ev.Block)
	}
	asked := ""
	f.runner.Confirm = func(q string) (bool, error) { asked = q; return true, nil }
	ev = bashCall("./deploy")
	if err := f.reg.Run(context.Background(), ev); err != nil || ev.Block != nil {
		t.Fatalf("run %v, block %v after the user agreed", err, ev.Block)
	}
	if !strings.Contains(asked, "./deploy") || !strings.Contains(asked, "deploys need a human") {
		t.Errorf("asked %q", asked)
	}
}

func TestPreToolUseRewritesArguments(t *testing.T) {
	f := newFixture(t, map[string]string{"h.sh": `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "make test", "description": "safer", "timeout": 30000}}}'
`}, preToolUse("Bash", cmd("h.sh", "")))
	ev := bashCall("go test ./...")
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if ev.Block != nil || string(ev.Args) != `{"command":"make test","description":"safer","timeout":30}` {
		t.Errorf("block %v args %s; want rein's arguments (timeout in seconds)", ev.Block, ev.Args)
	}
	if got := f.outcomes(); !strings.HasSuffix(got, "=changed") {
		t.Errorf("runs %s", got)
	}

	// File tools: absolute file_path in the input, back to a workspace path in the rewrite.
	f = newFixture(t, map[string]string{"h.sh": `cat > "$CLAUDE_PROJECT_DIR/in.json"
printf '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"file_path": "%s/src/b.txt", "old_string": "x", "new_string": "y", "replace_all": false}}}' "$CLAUDE_PROJECT_DIR"
`}, preToolUse("Edit|Write", cmd("h.sh", "")))
	args := json.RawMessage(`{"path":"a.txt","edits":[{"oldText":"a","newText":"b"}]}`)
	ev = &hooks.BeforeTool{Call: &llm.ToolCall{ID: "c", Name: "edit"}, Spec: tool.Spec{Name: "edit"}, Args: args}
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	in := f.input("in.json")["tool_input"].(map[string]any)
	if in["file_path"] != filepath.Join(f.dir, "a.txt") || in["old_string"] != "a" || in["new_string"] != "b" {
		t.Errorf("tool_input %v", in)
	}
	if string(ev.Args) != `{"edits":[{"newText":"y","oldText":"x"}],"path":"src/b.txt"}` {
		t.Errorf("args %s", ev.Args)
	}

	// A rewrite rein cannot honour refuses the call rather than running it unchanged.
	f = newFixture(t, map[string]string{"h.sh": `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "x", "run_in_background": true}}}'
`}, preToolUse("Bash", cmd("h.sh", "")))
	ev = bashCall("sleep 100")
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if ev.Block == nil || !strings.Contains(ev.Block.Error(), "run_in_background") {
		t.Errorf("Block = %v", ev.Block)
	}
}

func TestMatchersAreWholeNameRegexps(t *testing.T) {
	for _, tc := range []struct {
		matcher string
		tool    string
		runs    bool
	}{
		{"Bash", "bash", true},
		{"bash", "bash", true}, // rein's own name matches too
		{"Edit|Write", "write", true},
		{"Edit|Write", "bash", false},
		{"Ba", "bash", false}, // whole names only
		{"B.*", "bash", true},
		{"*", "grep", true},
		{"", "find", true},
		{"Glob", "find", true},
	} {
		f := newFixture(t, map[string]string{"h.sh": "cat >/dev/null\n"}, preToolUse(tc.matcher, cmd("h.sh", "")))
		ev := &hooks.BeforeTool{Call: &llm.ToolCall{ID: "c", Name: tc.tool}, Spec: tool.Spec{Name: tc.tool}, Args: json.RawMessage(`{"pattern":"x"}`)}
		if tc.tool == "write" {
			ev.Args = json.RawMessage(`{"path":"a","content":""}`)
		}
		if err := f.reg.Run(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if ran := f.outcomes() != ""; ran != tc.runs {
			t.Errorf("matcher %q on %s: ran %v, want %v", tc.matcher, tc.tool, ran, tc.runs)
		}
	}
}

func TestFailOpenAndFailClosed(t *testing.T) {
	for _, tc := range []struct {
		name, body, detail, errText string
		// plainWhenOpen: Claude Code reads JSON that does not parse as plain text, so a hook
		// failing open runs fine; failing closed it is a failure.
		plainWhenOpen bool
	}{
		{"crash", "cat >/dev/null\necho 'guard: config missing' >&2\nexit 1\n", "exit status 1", "guard: config missing", false},
		{"garbage JSON", "cat >/dev/null\necho '{not json'\n", "invalid output", "not valid", true},
		{"unknown field", "cat >/dev/null\necho '{\"decison\": \"block\"}'\n", "invalid output", "decison", false},
		{"wrong decision", "cat >/dev/null\necho '{\"decision\": \"maybe\"}'\n", "invalid output", "maybe", false},
		{"wrong event name", "cat >/dev/null\necho '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\"}}'\n", "invalid output", "PostToolUse", false},
		{"killed", "cat >/dev/null\nkill -9 $$\n", "exit status 137", "137", false}, // sh reports its child killed
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Fail open (the default): reported, ignored, the call goes ahead.
			f := newFixture(t, map[string]string{"h.sh": tc.body}, preToolUse("", cmd("h.sh", "")))
			ev := bashCall("ls")
			if err := f.reg.Run(context.Background(), ev); err != nil || ev.Block != nil {
				t.Fatalf("fail open: err %v block %v", err, ev.Block)
			}
			want := "project:PreToolUse[0].hooks[0]=failed(" + tc.detail + ")"
			if tc.plainWhenOpen {
				want = "project:PreToolUse[0].hooks[0]=ok"
			}
			if got := f.outcomes(); got != want {
				t.Errorf("runs %s", got)
			}
			if !tc.plainWhenOpen && !strings.Contains(f.runs[0].Err.Error(), tc.errText) {
				t.Errorf("error %q, want it to mention %q", f.runs[0].Err, tc.errText)
			}
			// Fail closed: the registry returns the failure; the kernel refuses the call.
			f = newFixture(t, map[string]string{"h.sh": tc.body}, preToolUse("", cmd("h.sh", `, "failClosed": true`)))
			err := f.reg.Run(context.Background(), bashCall("ls"))
			var he *hooks.Error
			if !errors.As(err, &he) || he.Hook != "project:PreToolUse[0].hooks[0]" || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("fail closed: %v", err)
			}
		})
	}
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	f := newFixture(t, map[string]string{"slow.sh": `cat >/dev/null
sleep 60 &
echo $! > "$CLAUDE_PROJECT_DIR/child.pid"
wait
`}, preToolUse("", cmd("slow.sh", `, "timeout": 0.5`)))
	ev := bashCall("ls")
	if err := f.reg.Run(context.Background(), ev); err != nil || ev.Block != nil {
		t.Fatalf("err %v block %v; a timeout fails open by default", err, ev.Block)
	}
	if got := f.outcomes(); got != "project:PreToolUse[0].hooks[0]=failed(timeout)" {
		t.Errorf("runs %s", got)
	}
	data, err := os.ReadFile(filepath.Join(f.dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	// The group was sent SIGKILL before Run returned. The kernel delivers it asynchronously,
	// so wait (bounded) until the child is gone or a zombie awaiting its reaper.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hook's background child %d survived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPostToolUseFeedbackAndContext(t *testing.T) {
	f := newFixture(t, map[string]string{
		"lint.sh": `cat > "$CLAUDE_PROJECT_DIR/in.json"
echo "lint: missing semicolon" >&2
exit 2
`,
		"ctx.sh": `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "remember to run the tests"}}'
`,
	}, `{"PostToolUse": [{"matcher": "Write", "hooks": [`+cmd("lint.sh", "")+`, `+cmd("ctx.sh", "")+`]}]}`)
	res := llm.Message{Role: llm.RoleTool, ToolCallID: "c", ToolName: "write", Content: []llm.Part{llm.Text("wrote 3 bytes")}}
	ev := &hooks.AfterTool{Call: &llm.ToolCall{ID: "c", Name: "write"}, Args: json.RawMessage(`{"path":"a.js","content":"x=1"}`), Result: &res}
	if err := f.reg.Run(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	text := ev.Result.Text()
	if !strings.HasPrefix(text, "wrote 3 bytes") || !strings.Contains(text, "lint: missing semicolon") || !strings.Contains(text, "remember to run the tests") {
		t.Errorf("result %q", text)
	}
	if res.Text() != "wrote 3 bytes" {
		t.Error("the original result was modified in place")
	}
	in := f.input("in.json")
	resp, _ := in["tool_response"].(map[string]any)
	if in["tool_name"] != "Write" || resp["output"] != "wrote 3 bytes" || resp["filePath"] != filepath.Join(f.dir, "a.js") || resp["isError"] != false {
		t.Errorf("input %v", in)
	}
	// Claude Code's PostToolUse follows successful tools only.
	f.runs = nil
	failed := llm.Message{Role: llm.RoleTool, IsError: true, Content: []llm.Part{llm.Text("no")}}
	if err := f.reg.Run(context.Background(), &hooks.AfterTool{Call: ev.Call, Args: ev.Args, Result: &failed}); err != nil || f.outcomes() != "" {
		t.Errorf("ran on an error result: %v %s", err, f.outcomes())
	}
}

func TestPromptSessionStopAndCompactEvents(t *testing.T) {
	f := newFixture(t, map[string]string{
		"prompt.sh": `cat > "$CLAUDE_PROJECT_DIR/prompt.json"
if grep -q password "$CLAUDE_PROJECT_DIR/prompt.json"; then echo "no secrets in prompts" >&2; exit 2; fi
echo "Current branch: main"
`,
		"start.sh": `cat > "$CLAUDE_PROJECT_DIR/start.json"
echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "Team conventions: tabs."}}'
`,
		"stop.sh": `cat > "$CLAUDE_PROJECT_DIR/stop.json"
if grep -q '"stop_hook_active":true' "$CLAUDE_PROJECT_DIR/stop.json"; then exit 0; fi
echo '{"decision": "block", "reason": "run the tests first"}'
`,
		"compact.sh": `cat > "$CLAUDE_PROJECT_DIR/compact.json"
echo "not during the demo" >&2
exit 2
`,
		"end.sh": `cat > "$CLAUDE_PROJECT_DIR/end.json"
`,
	}, `{
  "UserPromptSubmit": [{"hooks": [`+cmd("prompt.sh", "")+`]}],
  "SessionStart": [{"matcher": "startup", "hooks": [`+cmd("start.sh", "")+`]}],
  "Stop": [{"hooks": [`+cmd("stop.sh", "")+`]}],
  "PreCompact": [{"matcher": "manual", "hooks": [`+cmd("compact.sh", "")+`]}],
  "SessionEnd": [{"hooks": [`+cmd("end.sh", "")+`]}]
}`)
	ctx := context.Background()

	p := llm.UserText("fix the bug")
	ba := &hooks.BeforeAgentStart{Prompt: &p, System: "sys"}
	if err := f.reg.Run(ctx, ba); err != nil || ba.Block != nil {
		t.Fatalf("prompt: %v %v", err, ba.Block)
	}
	if ba.Prompt.Text() != "fix the bug\n\nCurrent branch: main" || p.Text() != "fix the bug" {
		t.Errorf("prompt %q (original %q)", ba.Prompt.Text(), p.Text())
	}
	if in := f.input("prompt.json"); in["prompt"] != "fix the bug" || in["hook_event_name"] != "UserPromptSubmit" {
		t.Errorf("input %v", in)
	}
	secret := llm.UserText("my password is hunter2")
	ba = &hooks.BeforeAgentStart{Prompt: &secret}
	if err := f.reg.Run(ctx, ba); err != nil || ba.Block == nil || !strings.Contains(ba.Block.Error(), "no secrets in prompts") {
		t.Errorf("secret prompt: %v %v", err, ba.Block)
	}

	ss := &hooks.SessionStart{System: "sys"}
	if err := f.reg.Run(ctx, ss); err != nil || ss.System != "sys\n\nTeam conventions: tabs." {
		t.Errorf("session start: %v %q", err, ss.System)
	}
	if in := f.input("start.json"); in["source"] != "startup" {
		t.Errorf("input %v", in)
	}

	msg := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("all done")}}
	st := &hooks.Stop{Message: msg}
	if err := f.reg.Run(ctx, st); err != nil || st.Continue != "Stop hook feedback:\nrun the tests first" {
		t.Errorf("stop: %v %q", err, st.Continue)
	}
	if in := f.input("stop.json"); in["stop_hook_active"] != false || in["last_assistant_message"] != "all done" {
		t.Errorf("input %v", in)
	}
	st = &hooks.Stop{Message: msg, Active: true}
	if err := f.reg.Run(ctx, st); err != nil || st.Continue != "" {
		t.Errorf("active stop: %v %q", err, st.Continue)
	}

	bc := &hooks.BeforeCompact{Manual: true, Instructions: "keep the API"}
	if err := f.reg.Run(ctx, bc); err != nil || bc.Cancel == nil || !strings.Contains(bc.Cancel.Error(), "not during the demo") {
		t.Errorf("compact: %v %v", err, bc.Cancel)
	}
	if in := f.input("compact.json"); in["trigger"] != "manual" || in["custom_instructions"] != "keep the API" {
		t.Errorf("input %v", in)
	}
	auto := &hooks.BeforeCompact{Turn: 3}
	if err := f.reg.Run(ctx, auto); err != nil || auto.Cancel != nil {
		t.Errorf("the manual matcher ran for an automatic compaction: %v %v", err, auto.Cancel)
	}

	if err := f.reg.Run(ctx, &hooks.SessionEnd{Reason: hooks.EndExit}); err != nil {
		t.Fatal(err)
	}
	if in := f.input("end.json"); in["reason"] != "other" || in["hook_event_name"] != "SessionEnd" {
		t.Errorf("input %v", in)
	}
}

func TestContinueFalseStopsTheRun(t *testing.T) {
	f := newFixture(t, map[string]string{"h.sh": `cat >/dev/null
echo '{"continue": false, "stopReason": "budget for today is spent", "systemMessage": "see the dashboard"}'
`}, preToolUse("", cmd("h.sh", "")))
	err := f.reg.Run(context.Background(), bashCall("ls"))
	var stop *hooks.StopError
	if !errors.As(err, &stop) || stop.Reason != "budget for today is spent" {
		t.Errorf("err %v", err)
	}
	if len(f.notes) != 1 || !strings.Contains(f.notes[0], "see the dashboard") {
		t.Errorf("notices %q", f.notes)
	}
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct{ settings, want, warning string }{
		{`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 30, "failClosed": true}]}]}`, "", ""},
		// Every Claude Code event is accepted; those rein never fires are warned about.
		{`{"Notification": [{"hooks": [{"type": "command", "command": "x"}]}]}`, "", ""},
		// One warning names every event rein never fires.
		{`{"SubagentStart": [{"hooks": [{"type": "command", "command": "x"}]}], "Setup": [{"hooks": [{"type": "command", "command": "x"}]}]}`, "", "hooks.Setup, hooks.SubagentStart: accepted, never fired"},
		{`{"SubagentStop": [{"matcher": "", "hooks": [{"type": "command", "command": "x"}]}]}`, "", "hooks.SubagentStop: accepted, never fired"},
		{`{"Notifcation": [{"hooks": [{"type": "command", "command": "x"}]}]}`, "hooks.Notifcation: not a Claude Code hook event", ""},
		{`{"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}`, "hooks.PreToolUse[0].matcher:", ""},
		// Claude Code's other handler types parse and never run.
		{`{"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}`, "", `hooks.Stop[0].hooks[0]: hooks of type "prompt" are accepted, never run`},
		{`{"Stop": [{"hooks": [{"type": "http", "url": "http://x", "headers": {"a": "b"}}]}]}`, "", `hooks of type "http" are accepted, never run`},
		{`{"Stop": [{"hooks": [{"type": "webhook", "command": "x"}]}]}`, `hooks.Stop[0].hooks[0].type: "webhook" is not a hook type`, ""},
		{`{"Stop": [{"hooks": [{"type": "command", "command": " "}]}]}`, "hooks.Stop[0].hooks[0].command: empty", ""},
		{`{"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}`, "hooks.Stop[0].hooks[0].timeout", ""},
		{`{"Stop": [{"hooks": []}]}`, "hooks.Stop[0].hooks: no hooks", ""},
		{`{"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "if": "Bash(git *)", "async": true, "statusMessage": "s"}]}]}`, "", ""},
		{`{"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "if": "Bash("}]}]}`, "hooks.PreToolUse[0].hooks[0].if:", ""},
	} {
		var cfg command.Config
		if err := strictjson.Unmarshal([]byte(tc.settings), &cfg); err != nil {
			t.Fatalf("%s: %v", tc.settings, err)
		}
		warnings, err := cfg.Check("hooks", false)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.settings, err, tc.want)
		}
		if got := strings.Join(warnings, "\n"); tc.warning == "" && got != "" || !strings.Contains(got, tc.warning) {
			t.Errorf("%s: warnings %q, want %q", tc.settings, got, tc.warning)
		}
		// Leniently (a Claude Code file) an error is a warning and the entry is dropped.
		if tc.want != "" {
			var cfg command.Config
			_ = strictjson.Unmarshal([]byte(tc.settings), &cfg)
			warnings, err := cfg.Check("hooks", true)
			if err != nil || !strings.Contains(strings.Join(warnings, "\n"), tc.want) {
				t.Errorf("lenient %s: %v, warnings %q", tc.settings, err, warnings)
			}
		}
	}
	var cfg command.Config
	if err := strictjson.Unmarshal([]byte(`{"Stop": [{"hooks": [{"type": "command", "command": "x", "timout": 3}]}]}`), &cfg); err == nil {
		t.Error("a misspelt field was accepted")
	}
	a := command.Config{"Stop": {{Hooks: []command.Hook{{Type: "command", Command: "a"}}}}}
	b := command.Config{"Stop": {{Hooks: []command.Hook{{Type: "command", Command: "b"}, {Type: "command", Command: "a"}}}}}
	a.Label("global")
	b.Label("project")
	m := command.Merge(a, b)
	// The identical handler runs once, as in Claude Code.
	if len(m["Stop"]) != 2 || m["Stop"][0].Hooks[0].Name() != "global:Stop[0].hooks[0]" || len(m["Stop"][1].Hooks) != 1 ||
		m["Stop"][1].Hooks[0].Name() != "project:Stop[0].hooks[0]" {
		t.Errorf("merged %+v", m)
	}
}
