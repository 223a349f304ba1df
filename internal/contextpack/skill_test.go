package contextpack_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
)

func TestParseSkill(t *testing.T) {
	name64 := strings.Repeat("a", 64)
	desc1024 := strings.Repeat("é", 1024) // characters, not bytes
	for _, tc := range []struct {
		name     string
		dir      string
		data     []byte
		wantName string // default: dir
		wantWarn string // a warning containing it (the skill loads)
		wantErr  string // an error containing it (the skill is skipped)
	}{
		{name: "minimal", dir: "pdf", data: []byte("---\nname: pdf\ndescription: Read PDFs.\n---\n")},
		{name: "optional fields", dir: "pdf", data: []byte("---\nname: pdf\ndescription: Read PDFs.\nlicense: MIT\nmetadata:\n  version: \"1\"\nallowed-tools: Read\ncompatibility: needs poppler\nx-other: ignored\n---\n")},
		{name: "name of 64", dir: name64, data: mustFront(name64, "d")},
		{name: "name of 65", dir: name64 + "a", data: mustFront(name64+"a", "d"), wantWarn: "65 characters, more than 64"},
		{name: "description of 1024 characters", dir: "d", data: mustFront("d", desc1024)},
		{name: "description of 1025 characters", dir: "d", data: mustFront("d", desc1024+"x"), wantWarn: "1025 characters, more than 1024"},
		{name: "digits and hyphens", dir: "a1-b2", data: mustFront("a1-b2", "d")},
		{name: "upper case and spaces", dir: "hook-development", data: mustFront("Hook Development", "d"), wantName: "Hook Development", wantWarn: "lowercase letters"},
		{name: "underscore", dir: "a_b", data: mustFront("a_b", "d"), wantWarn: "lowercase letters"},
		{name: "leading hyphen", dir: "-a", data: mustFront("-a", "d"), wantWarn: "starts or ends with a hyphen"},
		{name: "double hyphen", dir: "a--b", data: mustFront("a--b", "d"), wantWarn: "consecutive hyphens"},
		{name: "dir mismatch", dir: "composition-patterns", data: mustFront("vercel-composition-patterns", "d"), wantName: "vercel-composition-patterns", wantWarn: `differs from its directory name "composition-patterns"`},
		{name: "no name", dir: "a", data: []byte("---\ndescription: d\n---\n"), wantWarn: "name is missing"},
		{name: "unquoted colon", dir: "a", data: []byte("---\nname: a\ndescription: Use when: the user asks about PDFs\n---\n"), wantWarn: "quoted"},
		{name: "block scalar", dir: "a", data: []byte("---\nname: a\ndescription: |-\n  Line one: with a colon.\n  Line two.\n---\n")},
		{name: "empty description", dir: "a", data: []byte("---\nname: a\ndescription: \"  \"\n---\n"), wantErr: "description is empty"},
		{name: "no description", dir: "a", data: []byte("---\nname: a\n---\n"), wantErr: "description is missing"},
		{name: "list description", dir: "a", data: []byte("---\nname: a\ndescription: [x]\n---\n"), wantErr: "description must be a string"},
		{name: "no frontmatter", dir: "a", data: []byte("# a\n"), wantErr: "no YAML frontmatter"},
		{name: "unclosed", dir: "a", data: []byte("---\nname: a\n"), wantErr: "no closing --- line"},
		{name: "bad yaml", dir: "a", data: []byte("---\nname: [\n---\n"), wantErr: "frontmatter: yaml"},
		{name: "long compatibility", dir: "a", data: []byte("---\nname: a\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n"), wantWarn: "compatibility has 501 characters"},
		{name: "bad allowed-tools", dir: "a", data: []byte("---\nname: a\ndescription: d\nallowed-tools: {x: 1}\n---\n"), wantErr: "allowed-tools must be"},
		{name: "bad boolean", dir: "a", data: []byte("---\nname: a\ndescription: d\ndisable-model-invocation: maybe\n---\n"), wantWarn: "not a boolean"},
		{name: "closing line with trailing spaces", dir: "a", data: []byte("---\nname: a\ndescription: d\n---  \n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, warns, err := contextpack.ParseSkill(tc.dir, tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSkill: %v", err)
			}
			want := tc.wantName
			if want == "" {
				want = tc.dir
			}
			if s.Name != want {
				t.Errorf("name %q, want %q", s.Name, want)
			}
			got := strings.Join(warns, "; ")
			if tc.wantWarn == "" && got != "" || !strings.Contains(got, tc.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tc.wantWarn)
			}
		})
	}
}

// TestParseSkillFields: the fields rein honours beyond name and description.
func TestParseSkillFields(t *testing.T) {
	data := []byte("---\nname: commit\ndescription: Commit staged work.\nallowed-tools: Bash(git add:*) Bash(git status:*), Read\ndisable-model-invocation: yes\nuser-invocable: false\n---\n\nRun git status.\n")
	s, warns, err := contextpack.ParseSkill("commit", data)
	if err != nil || len(warns) > 0 {
		t.Fatalf("ParseSkill: %v %v", err, warns)
	}
	if got := strings.Join(s.AllowedTools, "|"); got != "Bash(git add:*)|Bash(git status:*)|Read" {
		t.Errorf("allowed-tools %q", got)
	}
	if !s.DisableModelInvocation || s.UserInvocable {
		t.Errorf("disable-model-invocation %v, user-invocable %v", s.DisableModelInvocation, s.UserInvocable)
	}
	if s.Body != "\nRun git status.\n" {
		t.Errorf("body %q", s.Body)
	}
	list, _, err := contextpack.ParseSkill("x", []byte("---\nname: x\ndescription: d\nallowed-tools:\n  - Read\n  - Grep\n---\n"))
	if err != nil || strings.Join(list.AllowedTools, " ") != "Read Grep" || list.DisableModelInvocation || !list.UserInvocable {
		t.Errorf("list form: %+v %v", list, err)
	}
}

func mustFront(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n")
}

// TestTruncation: a context file over MaxFileBytes is cut at a line boundary, with a notice
// in the prompt and a diagnostic.
func TestTruncation(t *testing.T) {
	dir := realTempDir(t)
	line := strings.Repeat("x", 99) + "\n"
	big := strings.Repeat(line, 1000) // 100,000 bytes
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	a := contextpack.Build(contextpack.Inputs{Dir: dir, Date: date, Tools: allTools}, nil)
	var ctx *contextpack.Section
	for i := range a.Sections {
		if a.Sections[i].Source != "" && a.Sections[i].Name == contextpack.SectionContext {
			ctx = &a.Sections[i]
		}
	}
	if ctx == nil {
		t.Fatal("no context section")
	}
	shown := (contextpack.MaxFileBytes / 100) * 100
	if !strings.Contains(ctx.Text, strings.Repeat(line, shown/100)+"[rein: file truncated: 65500 of its 100000 bytes are shown]\n") {
		t.Errorf("section does not end with %d whole lines and the notice:\n...%s", shown/100, ctx.Text[len(ctx.Text)-200:])
	}
	if ctx.Bytes > contextpack.MaxFileBytes+200 {
		t.Errorf("section has %d bytes", ctx.Bytes)
	}
	if len(a.Diagnostics) != 1 || !strings.Contains(a.Diagnostics[0], "truncated: 65500 of its 100000 bytes") {
		t.Errorf("diagnostics %q", a.Diagnostics)
	}
	if ctx.Tokens != 0 {
		t.Errorf("tokens %d without an estimator", ctx.Tokens)
	}
}

// TestNotRegular: a context file that is a directory or a FIFO is skipped, not read.
func TestNotRegular(t *testing.T) {
	dir := realTempDir(t)
	if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := contextpack.Build(contextpack.Inputs{Dir: dir, Date: date}, nil)
	if len(a.Diagnostics) != 1 || !strings.Contains(a.Diagnostics[0], "not a regular file") {
		t.Errorf("diagnostics %q", a.Diagnostics)
	}
}

// TestRepoRootIsGitFile: a .git file (worktree, submodule) marks the root too.
func TestRepoRootIsGitFile(t *testing.T) {
	root := realTempDir(t)
	sub := filepath.Join(root, "wt", "pkg")
	for p, data := range map[string]string{
		"AGENTS.md":        "outside the worktree\n",
		"wt/.git":          "gitdir: ../.git/worktrees/wt\n",
		"wt/AGENTS.md":     "worktree root\n",
		"wt/pkg/AGENTS.md": "package\n",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := contextpack.Load(contextpack.Inputs{Dir: sub})
	if src.Root != filepath.Join(root, "wt") {
		t.Errorf("root %s", src.Root)
	}
	var got []string
	for _, f := range src.Context {
		got = append(got, strings.TrimSpace(f.Text))
	}
	if strings.Join(got, "|") != "worktree root|package" {
		t.Errorf("context files %q", got)
	}
}

// TestPluginSkills: an installed plugin's skills/<name>/SKILL.md load named PLUGIN:NAME after
// the user's skills, a short name the user's skill holds is no collision, a plugin without a
// skills directory loads its root SKILL.md, and a stray directory gets a diagnostic.
func TestPluginSkills(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	user, work := filepath.Join(base, "user"), filepath.Join(base, "work")
	fmtPlugin := filepath.Join(user, ".claude", "plugins", "cache", "acme", "formatter", "2.1.0")
	solo := filepath.Join(user, ".claude", "plugins", "cache", "acme", "solo", "1.0.0")
	for p, s := range map[string]string{
		filepath.Join(user, ".claude", "skills", "format", "SKILL.md"): "---\nname: format\ndescription: Prose.\n---\n",
		filepath.Join(fmtPlugin, "skills", "format", "SKILL.md"):       "---\nname: format\ndescription: Go.\n---\n",
		filepath.Join(fmtPlugin, "skills", "empty", "notes.txt"):       "x",
		filepath.Join(solo, "SKILL.md"):                                "---\nname: solo\ndescription: One skill.\n---\n",
		filepath.Join(work, "main.go"):                                 "package main\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := contextpack.Load(contextpack.Inputs{Dir: work, UserHome: user, Plugins: []contextpack.Plugin{
		{Name: "formatter", Dir: fmtPlugin}, {Name: "solo", Dir: solo}}})
	var got []string
	for _, s := range src.Skills {
		got = append(got, s.Name+"|"+s.Plugin+"|"+s.Path)
	}
	want := []string{
		"format||" + filepath.Join(user, ".claude", "skills", "format", "SKILL.md"),
		"formatter:format|formatter|" + filepath.Join(fmtPlugin, "skills", "format", "SKILL.md"),
		"solo:solo|solo|" + filepath.Join(solo, "SKILL.md"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("skills:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := strings.Join(src.Diagnostics, "\n"); !strings.Contains(d, filepath.Join(fmtPlugin, "skills", "empty")+": skipped: a plugin's skill is a directory") {
		t.Errorf("diagnostics lack the stray directory:\n%s", d)
	}
	asm := contextpack.Assemble(contextpack.Inputs{Dir: work, Tools: []contextpack.ToolLine{{Name: "read"}}}, src, nil)
	if !strings.Contains(asm.Prompt, "- formatter:format: Go.") || !slices.Contains(asm.SkillDirs, filepath.Join(fmtPlugin, "skills", "format")) {
		t.Errorf("index or read-only roots lack the plugin skill:\n%s\n%v", asm.Prompt, asm.SkillDirs)
	}
}
