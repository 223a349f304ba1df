package contextpack_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/reinhq/rein/internal/contextpack"
)

var update = flag.Bool("update", false, "rewrite testdata/assemble/*.golden from the actual output")

// allTools mirrors the default tool set; the snippets are the test's own.
var allTools = []contextpack.ToolLine{
	{Name: "read", Snippet: "Read a file"}, {Name: "write", Snippet: "Write a file"},
	{Name: "edit", Snippet: "Edit a file"}, {Name: "bash", Snippet: "Run a command"},
	{Name: "grep", Snippet: "Search file contents"}, {Name: "find", Snippet: "Find files"},
	{Name: "ls", Snippet: "List a directory"},
}

var date = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// TestGolden assembles the cases in testdata/assemble. Each archive holds a file tree and, in
// its comment, "key: value" options:
//
//	dir      the working directory, relative to the tree (required)
//	home     $REIN_HOME, relative to the tree (default: home)
//	userhome the user's home directory, relative to the tree (default: user)
//	trusted  true or false (default: true)
//	gated    true: context files are behind the trust gate too (default: false)
//	tools    comma-separated tool names from allTools, or none (default: all)
//	symlink  LINK=TARGET, made in the tree (repeatable)
//
// The output (sections, diagnostics, prompt; the tree's path replaced by $ROOT) must equal
// NAME.golden; go test -run Golden -update rewrites the golden files.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "assemble", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			got := runGolden(t, file)
			golden := strings.TrimSuffix(file, ".txtar") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func runGolden(t *testing.T, file string) string {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string][]string{}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			opts[strings.TrimSpace(k)] = append(opts[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	opt := func(k, def string) string {
		if v := opts[k]; len(v) > 0 {
			return v[0]
		}
		return def
	}
	root := realTempDir(t)
	for _, f := range ar.Files {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range opts["symlink"] {
		link, target, _ := strings.Cut(s, "=")
		p := filepath.Join(root, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	in := contextpack.Inputs{
		Dir:              filepath.Join(root, filepath.FromSlash(opt("dir", "."))),
		Home:             filepath.Join(root, opt("home", "home")),
		UserHome:         filepath.Join(root, opt("userhome", "user")),
		Date:             date,
		ProjectTrusted:   opt("trusted", "true") == "true",
		GateContextFiles: opt("gated", "false") == "true",
		Tools:            toolsNamed(t, opt("tools", "")),
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	asm := contextpack.Build(in, contextpack.Bytes4{})
	checkInvariants(t, asm)
	again := contextpack.Build(in, contextpack.Bytes4{})
	if again.Prompt != asm.Prompt {
		t.Error("two assemblies of the same inputs differ")
	}
	return render(asm, root)
}

func toolsNamed(t *testing.T, names string) []contextpack.ToolLine {
	switch names {
	case "":
		return allTools
	case "none":
		return nil
	}
	var out []contextpack.ToolLine
	for _, n := range strings.Split(names, ",") {
		found := false
		for _, tl := range allTools {
			if tl.Name == n {
				out, found = append(out, tl), true
			}
		}
		if !found {
			t.Fatalf("unknown tool %q", n)
		}
	}
	return out
}

// realTempDir returns a temporary directory with symlinks resolved, as the working directory
// of a run is.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// render shows a with the temporary root replaced by $ROOT; bytes and tokens are those of the
// replaced text, so they do not depend on the length of the temporary directory's name.
func render(a *contextpack.Assembly, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# sections: name source bytes tokens (%s)\n", a.Estimator)
	for _, s := range a.Sections {
		src := s.Source
		if src == "" {
			src = "-"
		}
		text := strings.ReplaceAll(s.Text, root, "$ROOT")
		fmt.Fprintf(&b, "%s %s %d %d\n", s.Name, src, len(text), contextpack.Bytes4{}.Tokens(text))
	}
	b.WriteString("# diagnostics\n")
	for _, d := range a.Diagnostics {
		b.WriteString(d + "\n")
	}
	if len(a.Untrusted) > 0 {
		b.WriteString("# untrusted\n")
		for _, u := range a.Untrusted {
			b.WriteString(u + "\n")
		}
	}
	b.WriteString("# prompt\n")
	b.WriteString(a.Prompt)
	return strings.ReplaceAll(b.String(), root, "$ROOT")
}

func checkInvariants(t *testing.T, a *contextpack.Assembly) {
	t.Helper()
	var b strings.Builder
	for _, s := range a.Sections {
		if s.Bytes != len(s.Text) {
			t.Errorf("section %s %s: Bytes %d, text has %d", s.Name, s.Source, s.Bytes, len(s.Text))
		}
		if a.Estimator == "bytes/4" && s.Tokens != (len(s.Text)+3)/4 {
			t.Errorf("section %s %s: Tokens %d for %d bytes", s.Name, s.Source, s.Tokens, len(s.Text))
		}
		b.WriteString(s.Text)
	}
	if b.String() != a.Prompt {
		t.Error("the prompt is not the concatenation of the sections")
	}
}
