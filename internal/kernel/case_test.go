package kernel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
	"github.com/reinhq/rein/internal/tool/shell"
)

// TestCases runs the kernel cases in testdata/cases. Each archive holds:
//
//	comment       "key: value" options: prompt, max-turns, symlink (NAME=TARGET, made in ws/)
//	scenario.yaml the script model's answers
//	ws/...        the workspace before the run
//	want/ws/...   files that must exist with exactly this content afterwards
//	want/absent   paths (one a line) that must not exist afterwards
//	want/trace    the run as one line per event that matters (see trace)
//
// Set REIN_UPDATE_CASES=1 to rewrite want/trace from the actual run.
func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases found: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runCase(t, file)
		})
	}
}

func runCase(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"prompt": "go"}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			opts[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var scenarioData []byte
	wantFiles := map[string]string{}
	var wantTrace string
	var absent []string
	for _, f := range ar.Files {
		switch {
		case f.Name == "scenario.yaml":
			scenarioData = f.Data
		case strings.HasPrefix(f.Name, "ws/"):
			p := filepath.Join(dir, strings.TrimPrefix(f.Name, "ws/"))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(f.Name, "want/ws/"):
			wantFiles[strings.TrimPrefix(f.Name, "want/ws/")] = string(f.Data)
		case f.Name == "want/absent":
			absent = strings.Fields(string(f.Data))
		case f.Name == "want/trace":
			wantTrace = string(f.Data)
		default:
			t.Fatalf("unknown file %s in case", f.Name)
		}
	}
	if link, ok := opts["symlink"]; ok {
		name, target, _ := strings.Cut(link, "=")
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	model, err := script.Parse(scenarioData, "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tools := append(fstool.All(ws), shell.New(ws.Dir, shell.Options{}), grep.New(ws, grep.Options{}))
	set, err := tool.New(tools...)
	if err != nil {
		t.Fatal(err)
	}
	maxTurns, _ := strconv.Atoi(opts["max-turns"])
	var trace []string
	a, err := kernel.New(kernel.Config{Model: model, Tools: set, Recorder: &kernel.Memory{}, MaxTurns: maxTurns,
		Observe: func(ev kernel.Event) {
			if line := traceLine(ev, ws.Dir); line != "" {
				trace = append(trace, line)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Run(context.Background(), nil, llm.UserText(opts["prompt"]))

	got := strings.Join(trace, "\n") + "\n"
	if os.Getenv("REIN_UPDATE_CASES") != "" {
		updateTrace(t, file, ar, got)
	} else if diff := cmp.Diff(wantTrace, got); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
	for name, want := range wantFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("want file %s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, string(data)); diff != "" {
			t.Errorf("file %s (-want +got):\n%s", name, diff)
		}
	}
	for _, name := range absent {
		if _, err := os.Lstat(filepath.Join(base, name)); err == nil {
			t.Errorf("%s exists, want it absent", name)
		}
	}
}

// traceLine renders the events a case asserts: tool results (in source order), turn ends and
// the outcome.
func traceLine(ev kernel.Event, dir string) string {
	switch ev.Type {
	case kernel.EventMessageEnd:
		if ev.Message.Role != llm.RoleTool {
			return ""
		}
		status := "ok"
		if ev.Message.IsError {
			status = "error"
		}
		text := strings.ReplaceAll(ev.Message.Text(), dir, "$WS")
		return fmt.Sprintf("tool %s %s %s: %s", ev.Message.ToolCallID, ev.Message.ToolName, status, firstParagraph(text))
	case kernel.EventTurnEnd:
		return fmt.Sprintf("turn %d %s calls=%d", ev.Turn, ev.Message.StopReason, len(ev.Message.ToolCalls()))
	case kernel.EventAgentEnd:
		line := fmt.Sprintf("end %s turns=%d", ev.Outcome.Status, ev.Outcome.Turns)
		if ev.Outcome.Final != nil && ev.Outcome.Final.Text() != "" {
			line += " text=" + strconv.Quote(ev.Outcome.Final.Text())
		}
		return line
	}
	return ""
}

// firstParagraph keeps the text up to the first blank line, on one line.
func firstParagraph(s string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(s), "\n\n")
	return strings.ReplaceAll(para, "\n", " / ")
}

func updateTrace(t *testing.T, file string, ar *txtar.Archive, trace string) {
	found := false
	for i := range ar.Files {
		if ar.Files[i].Name == "want/trace" {
			ar.Files[i].Data, found = []byte(trace), true
		}
	}
	if !found {
		ar.Files = append(ar.Files, txtar.File{Name: "want/trace", Data: []byte(trace)})
	}
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}
