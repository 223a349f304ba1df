package system

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
)

// TestNotificationOnPermissionPrompt: an ask rule about to prompt fires the Notification
// hooks matching permission_prompt, with Claude Code's input, before the user is asked; a
// hook matching another type does not run, and nothing a Notification hook answers (exit
// status 2 here) decides anything.
func TestNotificationOnPermissionPrompt(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	out := filepath.Join(dir, "notification.json")
	other := filepath.Join(dir, "idle.json")
	settings := `{"permissions": {"ask": ["bash(echo *)"]}, "hooks": {"Notification": [
	  {"matcher": "permission_prompt", "hooks": [{"type": "command", "command": "cat > ` + out + `; echo no >&2; exit 2"}]},
	  {"matcher": "idle_prompt", "hooks": [{"type": "command", "command": "cat > ` + other + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(home, SettingsFile), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - calls: [{name: bash, args: {command: 'echo hi'}}]\n  - text: done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notifiedFirst bool
	confirm := func(q string) (bool, error) {
		_, err := os.Stat(out)
		notifiedFirst = err == nil
		return true, nil
	}
	rt, err := Build(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Confirm: confirm, Session: SessionChoice{Mode: SessionNone}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(context.Background(), llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if !notifiedFirst {
		t.Error("the user was asked before the Notification hook ran")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if in["hook_event_name"] != "Notification" || in["notification_type"] != "permission_prompt" ||
		in["message"] != "rein needs your permission to use Bash" || in["permission_mode"] != "default" || in["cwd"] == nil {
		t.Errorf("input %s", data)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("the idle_prompt hook ran for a permission prompt")
	}
	if !strings.Contains(res.Final.Text(), "done") {
		t.Errorf("the run did not go on: %+v", res)
	}
}
