package system

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

// TestBashSettingAndJournal: "bash": {"keepBackground": true} in the global settings reaches
// the bash tool (its description no longer promises to end background processes); a project
// cannot set it; a runtime keeps a process journal under $REIN_HOME/procs until Close.
func TestBashSettingAndJournal(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: hi\n"), 0o644)
	build := func() *Runtime {
		t.Helper()
		rt, err := Build(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Session: SessionChoice{Mode: SessionNone}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	const promise = "are ended when the command ends"
	rt := build()
	if spec, _ := rt.Tools.Spec("bash"); !strings.Contains(spec.Description, promise) {
		t.Errorf("by default bash does not say it ends background processes: %q", spec.Description)
	}
	if journals, _ := filepath.Glob(filepath.Join(home, ProcsDir, "*.json")); len(journals) != 0 {
		t.Fatalf("journals before any process started = %v, want none", journals)
	}
	bash, _ := rt.Tools.Get("bash")
	res, err := bash.Run(context.Background(), tool.Call{ID: "c1", Args: json.RawMessage(`{"command": "true"}`)})
	if err != nil || res.IsError {
		t.Fatalf("bash: %+v %v", res, err)
	}
	journals, _ := filepath.Glob(filepath.Join(home, ProcsDir, "*.json"))
	if len(journals) != 1 {
		t.Fatalf("journals while the runtime is open, after a command = %v, want one", journals)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journals[0]); !os.IsNotExist(err) {
		t.Errorf("the journal outlived Close (%v)", err)
	}

	os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"bash": {"keepBackground": true}}`), 0o600)
	rt = build()
	defer rt.Close()
	if spec, _ := rt.Tools.Spec("bash"); strings.Contains(spec.Description, promise) {
		t.Errorf("keepBackground did not reach bash: %q", spec.Description)
	}
	// `rein context` shows the tools as the run has them.
	c, err := Inspect(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Session: SessionChoice{Mode: SessionNone}}, "")
	if err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, spec := range c.Tools {
		if spec.Name == "bash" {
			shown = true
			if strings.Contains(spec.Description, promise) {
				t.Errorf("Inspect shows a bash tool without keepBackground: %q", spec.Description)
			}
		}
	}
	if !shown {
		t.Error("Inspect shows no bash tool")
	}
	proj := filepath.Join(dir, ".rein")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, SettingsFile), []byte(`{"bash": {"keepBackground": true}}`), 0o644)
	if _, err := ReadSettings(filepath.Join(proj, SettingsFile), false); err == nil || !strings.Contains(err.Error(), "bash settings may only be set") {
		t.Errorf("project bash setting: %v", err)
	}
	if _, err := ReadSettings(filepath.Join(home, SettingsFile), true); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"bash": {"keepbackground": true}}`), 0o600)
	if _, err := ReadSettings(filepath.Join(home, SettingsFile), true); err == nil {
		t.Error("a misspelt bash setting was accepted")
	}
}
