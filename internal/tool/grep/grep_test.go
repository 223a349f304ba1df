package grep_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/grep"
)

// backends returns every backend to run the conformance suite against.
func backends(t testing.TB) map[string]grep.Backend {
	bs := map[string]grep.Backend{"native": grep.NewNative()}
	if rg, ok := grep.LookRipgrep(); ok {
		bs["rg"] = rg
	} else {
		bs["rg"] = nil
	}
	return bs
}

func forEachBackend(t *testing.T, f func(t *testing.T, b grep.Backend)) {
	for _, name := range []string{"native", "rg"} {
		b := backends(t)[name]
		t.Run(name, func(t *testing.T) {
			if b == nil {
				t.Skip("rg is not on PATH: the ripgrep backend is not tested (install the ripgrep package)")
			}
			f(t, b)
		})
	}
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitCmd(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
}

// fixture builds the shared tree. In a git work tree when inGit is set.
func fixture(t testing.TB, inGit bool) *tool.Workspace {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".gitignore":    "ignored.txt\nbuild/\n",
		"main.go":       "package main\n\nfunc main() {\n\tprintln(\"Hello, World\")\n}\n",
		"README.md":     "# Demo\nhello readme\n",
		"ignored.txt":   "hello ignored\n",
		"build/out.txt": "hello build\n",
		"sub/a.go":      "package sub\n\nfunc A() string { return \"hello a\" }\n",
		"sub/deep/b.go": "package deep\n\n// HELLO b\nfunc B() {}\n",
		"sub/notes.txt": "hello notes\n",
		".hidden/h.txt": "hello hidden\n",
		"a.txt":         "hello a.txt\n",
		"a-b.txt":       "hello a-b\n",
		"a/b.txt":       "hello a/b\n",
		"long.txt":      "start " + strings.Repeat("é", 600) + " needle end\nshort needle\n",
		"bin.dat":       "hello\x00binary\nhello again\n",
		"crlf.txt":      "hello crlf\r\nsecond line\r\n",
		"ctx.txt":       "l1\nl2 mark\nl3\nl4\nl5 mark\nl6\nl7\nl8\nl9\nl10 mark\n",
		"many.txt":      manyLines(150),
		"dash.txt":      "-e is not a flag\n",
		"nonl.txt":      "last line without newline",
	}
	for name, content := range files {
		write(t, dir, name, content)
	}
	if err := os.Symlink("main.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if inGit {
		requireGit(t)
		gitCmd(t, dir, "init", "-q")
		gitCmd(t, dir, "add", "main.go", "sub/a.go") // some tracked, the rest untracked
	}
	ws, err := tool.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func manyLines(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "item %d\n", i)
	}
	return sb.String()
}

func runGrep(t *testing.T, g *grep.Grep, args string) (tool.Result, error) {
	t.Helper()
	return g.Run(t.Context(), tool.Call{ID: "g", Args: json.RawMessage(args)})
}

func text(r tool.Result) string {
	var sb strings.Builder
	for _, p := range r.Content {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

type grepCase struct {
	name string
	args string
	want string
}

var longShown = "long.txt:1: start " + strings.Repeat("é", 494) + "... [truncated]"

var gitCases = []grepCase{
	{"literal", `{"pattern":"Hello, World","literal":true}`,
		"main.go:4: \tprintln(\"Hello, World\")"},
	{"literal is not a regex", `{"pattern":"l1.","literal":true}`, "No matches found"},
	{"regex", `{"pattern":"^func [A-Z]\\w*\\("}`,
		"sub/a.go:3: func A() string { return \"hello a\" }\nsub/deep/b.go:4: func B() {}"},
	{"case sensitive by default", `{"pattern":"hello b"}`, "No matches found"},
	{"ignoreCase, order, hidden files, gitignore", `{"pattern":"hello","ignoreCase":true}`, strings.Join([]string{
		".hidden/h.txt:1: hello hidden",
		"README.md:2: hello readme",
		"a/b.txt:1: hello a/b",
		"a-b.txt:1: hello a-b",
		"a.txt:1: hello a.txt",
		"crlf.txt:1: hello crlf",
		"main.go:4: \tprintln(\"Hello, World\")",
		"sub/a.go:3: func A() string { return \"hello a\" }",
		"sub/deep/b.go:3: // HELLO b",
		"sub/notes.txt:1: hello notes",
	}, "\n")},
	{"glob by name", `{"pattern":"hello","glob":"*.go"}`,
		"sub/a.go:3: func A() string { return \"hello a\" }"},
	{"glob with braces", `{"pattern":"hello","ignoreCase":true,"glob":"*.{go,md}"}`, strings.Join([]string{
		"README.md:2: hello readme",
		"main.go:4: \tprintln(\"Hello, World\")",
		"sub/a.go:3: func A() string { return \"hello a\" }",
		"sub/deep/b.go:3: // HELLO b",
	}, "\n")},
	{"glob by path", `{"pattern":"hello","ignoreCase":true,"glob":"sub/**/*.go"}`,
		"sub/a.go:3: func A() string { return \"hello a\" }\nsub/deep/b.go:3: // HELLO b"},
	{"anchored glob", `{"pattern":"hello","glob":"/a.txt"}`, "a.txt:1: hello a.txt"},
	{"glob never brings back ignored files", `{"pattern":"hello","glob":"*.txt","path":"."}`, strings.Join([]string{
		".hidden/h.txt:1: hello hidden",
		"a/b.txt:1: hello a/b",
		"a-b.txt:1: hello a-b",
		"a.txt:1: hello a.txt",
		"crlf.txt:1: hello crlf",
		"sub/notes.txt:1: hello notes",
	}, "\n")},
	{"negated glob excludes directories", `{"pattern":"hello","ignoreCase":true,"glob":"!sub"}`, strings.Join([]string{
		".hidden/h.txt:1: hello hidden",
		"README.md:2: hello readme",
		"a/b.txt:1: hello a/b",
		"a-b.txt:1: hello a-b",
		"a.txt:1: hello a.txt",
		"crlf.txt:1: hello crlf",
		"main.go:4: \tprintln(\"Hello, World\")",
	}, "\n")},
	{"negated name glob", `{"pattern":"hello","glob":"!*.txt"}`, strings.Join([]string{
		"README.md:2: hello readme",
		"sub/a.go:3: func A() string { return \"hello a\" }",
	}, "\n")},
	{"path directory", `{"pattern":"hello","ignoreCase":true,"path":"sub"}`, strings.Join([]string{
		"sub/a.go:3: func A() string { return \"hello a\" }",
		"sub/deep/b.go:3: // HELLO b",
		"sub/notes.txt:1: hello notes",
	}, "\n")},
	{"path with @ and slash", `{"pattern":"hello","path":"@sub/deep/"}`, "No matches found"},
	{"path file", `{"pattern":"func","path":"sub/deep/b.go"}`, "sub/deep/b.go:4: func B() {}"},
	{"explicit ignored directory is searched", `{"pattern":"hello","path":"build"}`, "build/out.txt:1: hello build"},
	{"explicit ignored file is searched", `{"pattern":"hello","path":"ignored.txt"}`, "ignored.txt:1: hello ignored"},
	{"binary file skipped when walking", `{"pattern":"again"}`, "No matches found"},
	{"binary file searched when named", `{"pattern":"again","path":"bin.dat"}`, "bin.dat:2: hello again"},
	{"context merges neighbours", `{"pattern":"mark","context":2,"path":"ctx.txt"}`, strings.Join([]string{
		"ctx.txt-1- l1",
		"ctx.txt:2: l2 mark",
		"ctx.txt-3- l3",
		"ctx.txt-4- l4",
		"ctx.txt:5: l5 mark",
		"ctx.txt-6- l6",
		"ctx.txt-7- l7",
		"ctx.txt-8- l8",
		"ctx.txt-9- l9",
		"ctx.txt:10: l10 mark",
	}, "\n")},
	{"context 1", `{"pattern":"l5","context":1}`, "ctx.txt-4- l4\nctx.txt:5: l5 mark\nctx.txt-6- l6"},
	{"limit", `{"pattern":"^item","path":"many.txt","limit":3}`,
		"many.txt:1: item 1\nmany.txt:2: item 2\nmany.txt:3: item 3\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"},
	{"limit not reached when exact", `{"pattern":"^item 1[0-9]$","path":"many.txt","limit":10}`, strings.Join([]string{
		"many.txt:10: item 10", "many.txt:11: item 11", "many.txt:12: item 12", "many.txt:13: item 13", "many.txt:14: item 14",
		"many.txt:15: item 15", "many.txt:16: item 16", "many.txt:17: item 17", "many.txt:18: item 18", "many.txt:19: item 19",
	}, "\n")},
	{"long line cap", `{"pattern":"needle"}`,
		longShown + "\nlong.txt:2: short needle\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"},
	{"crlf", `{"pattern":"crlf$"}`, "No matches found"},
	{"crlf shown without carriage return", `{"pattern":"second"}`, "crlf.txt:2: second line"},
	{"pattern starting with a dash", `{"pattern":"-e is","literal":true}`, "dash.txt:1: -e is not a flag"},
	{"last line without newline", `{"pattern":"newline$"}`, "nonl.txt:1: last line without newline"},
	{"empty-line pattern does not match past the end", `{"pattern":"^$","path":"main.go"}`, "main.go:2: "},
	{"symlinks are not followed", `{"pattern":"package main"}`, "main.go:1: package main"},
	{"no matches", `{"pattern":"zzz-not-there"}`, "No matches found"},
}

func TestConformanceGitTree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		ws := fixture(t, true)
		g := grep.New(ws, grep.Options{Backend: b})
		for _, c := range gitCases {
			t.Run(c.name, func(t *testing.T) {
				res, err := runGrep(t, g, c.args)
				if err != nil {
					t.Fatalf("Run(%s): %v", c.args, err)
				}
				if res.IsError {
					t.Fatalf("error result: %q", text(res))
				}
				if diff := cmp.Diff(c.want, text(res)); diff != "" {
					t.Errorf("Run(%s) (-want +got):\n%s", c.args, diff)
				}
			})
		}
	})
}

func TestConformanceOutsideGit(t *testing.T) {
	// Outside a work tree .gitignore is not consulted, as ripgrep does.
	want := strings.Join([]string{
		"build/out.txt:1: hello build",
		"ignored.txt:1: hello ignored",
	}, "\n")
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		ws := fixture(t, false)
		g := grep.New(ws, grep.Options{Backend: b})
		res, err := runGrep(t, g, `{"pattern":"hello (build|ignored)"}`)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, text(res)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestConformanceErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		ws := fixture(t, true)
		outside := t.TempDir()
		write(t, outside, "secret.txt", "hello secret\n")
		if err := os.Symlink(outside, filepath.Join(ws.Dir, "escape")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws.Dir, "escape.txt")); err != nil {
			t.Fatal(err)
		}
		g := grep.New(ws, grep.Options{Backend: b})
		for _, c := range []struct {
			args string
			is   error
		}{
			{`{"pattern":"hello","path":"../"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"hello","path":"sub/../../x"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"hello","path":"/etc"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"hello","path":"escape"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"hello","path":"escape/secret.txt"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"hello","path":"escape.txt"}`, tool.ErrOutsideWorkspace},
			{`{"pattern":"(unclosed"}`, grep.ErrPattern},
			{`{"pattern":"a\nb"}`, grep.ErrPattern},
			{`{"pattern":"a\\nb"}`, grep.ErrPattern},
			{`{"pattern":"a\nb","literal":true}`, grep.ErrPattern},
			{`{"pattern":"hello","path":"missing"}`, nil},
			{`{"pattern":"hello","glob":"[a-"}`, nil},
			{`{"pattern":"hello","limit":0}`, nil},
			{`{"pattern":"hello","context":-1}`, nil},
		} {
			_, err := runGrep(t, g, c.args)
			if err == nil {
				t.Errorf("Run(%s) succeeded", c.args)
				continue
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("Run(%s) = %v, want an error wrapping %v", c.args, err, c.is)
			}
		}
		// An absolute path inside the workspace is fine.
		res, err := runGrep(t, g, fmt.Sprintf(`{"pattern":"hello","path":%q}`, filepath.Join(ws.Dir, "sub", "notes.txt")))
		if err != nil || text(res) != "sub/notes.txt:1: hello notes" {
			t.Errorf("absolute path inside: %q, %v", text(res), err)
		}
	})
}

func TestConformanceByteLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		ws := fixture(t, true)
		var sb strings.Builder
		for i := range 300 {
			fmt.Fprintf(&sb, "%04d %s\n", i, strings.Repeat("w", 300))
		}
		write(t, ws.Dir, "wide.txt", sb.String())
		g := grep.New(ws, grep.Options{Backend: b})
		res, err := runGrep(t, g, `{"pattern":"w+$","path":"wide.txt","limit":1000}`)
		if err != nil {
			t.Fatal(err)
		}
		got := text(res)
		if !strings.HasSuffix(got, "\n\n[50.0KB limit reached]") {
			t.Fatalf("text ends %q", got[max(0, len(got)-100):])
		}
		d := res.Details.(*grep.Details)
		if d.Truncation == nil || d.Truncation.TotalLines != 300 || d.MatchLimitReached != 0 {
			t.Fatalf("details = %+v", d)
		}
		if len(got) > tool.MaxBytes+100 {
			t.Fatalf("%d bytes returned", len(got))
		}
	})
}

// The backends must agree on queries beyond the hand-written cases.
func TestBackendsAgree(t *testing.T) {
	rg, ok := grep.LookRipgrep()
	if !ok {
		t.Skip("rg is not on PATH: nothing to compare the native backend with (install the ripgrep package)")
	}
	ws := fixture(t, true)
	gitCmd(t, ws.Dir, "init", "-q", "nested")
	write(t, ws.Dir, "nested/n.txt", "hello nested\n")
	write(t, ws.Dir, "nested/.gitignore", "skip.txt\n")
	write(t, ws.Dir, "nested/skip.txt", "hello skip\n")
	write(t, ws.Dir, "sub/.gitignore", "*.txt\n")
	write(t, ws.Dir, "sub/x/.hello.txt", "hello dotfile\n")
	// Case variants outside ASCII: the long s folds with s, the Kelvin sign with k.
	write(t, ws.Dir, "fold.txt", "ta\u017fk\nTASK\nKey\n\u212aey\nMASKED\nhandle\nHaNdLe\n")
	native := grep.New(ws, grep.Options{Backend: grep.NewNative()})
	rgTool := grep.New(ws, grep.Options{Backend: rg})
	queries := []string{
		`{"pattern":"hello"}`,
		`{"pattern":"hello","ignoreCase":true,"context":3}`,
		`{"pattern":"[a-z]+","limit":7}`,
		`{"pattern":"","limit":1000}`,
		`{"pattern":"e","glob":"*.txt","limit":1000}`,
		`{"pattern":"\\bl\\d\\b","context":1}`,
		`{"pattern":"(?i)WORLD|readme"}`,
		`{"pattern":"é+","limit":2}`,
		`{"pattern":".","literal":true,"ignoreCase":true}`,
		`{"pattern":"item 1\\d*$","path":"many.txt","context":1,"limit":20}`,
		`{"pattern":"o","path":"nested"}`,
		`{"pattern":"a","glob":"!a*","limit":500}`,
		`{"pattern":"task","ignoreCase":true}`,
		`{"pattern":"key","ignoreCase":true,"literal":true}`,
		`{"pattern":"handle","ignoreCase":true}`,
		`{"pattern":"ASK","ignoreCase":true,"path":"fold.txt"}`,
		`{"pattern":"hello","glob":"**/*.txt","context":1}`,
		`{"pattern":"hello","glob":"!**/deep/**"}`,
		`{"pattern":"hello","glob":"a*"}`,
		`{"pattern":"(?m)^l\d$"}`,
		`{"pattern":"^item 15\d$","limit":3}`,
	}
	for _, q := range queries {
		want, err1 := runGrep(t, rgTool, q)
		got, err2 := runGrep(t, native, q)
		if (err1 == nil) != (err2 == nil) {
			t.Errorf("%s: rg error %v, native error %v", q, err1, err2)
			continue
		}
		if diff := cmp.Diff(text(want), text(got)); diff != "" {
			t.Errorf("%s: rg (-) and native (+) differ:\n%s", q, diff)
		}
	}
}

func TestSpec(t *testing.T) {
	ws := fixture(t, false)
	s := grep.New(ws, grep.Options{}).Spec()
	if s.Name != "grep" || s.Replay != tool.ReplaySafe {
		t.Fatalf("spec = %+v", s)
	}
	var v map[string]any
	if err := json.Unmarshal(s.Schema, &v); err != nil {
		t.Fatal(err)
	}
}

func TestCancelled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b grep.Backend) {
		ws := fixture(t, true)
		g := grep.New(ws, grep.Options{Backend: b})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := g.Run(ctx, tool.Call{Args: json.RawMessage(`{"pattern":"hello"}`)})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestDefaultBackend(t *testing.T) {
	ws := fixture(t, false)
	want := "native"
	if _, ok := grep.LookRipgrep(); ok {
		want = "rg"
	}
	if got := grep.New(ws, grep.Options{}).Backend().Name(); got != want {
		t.Fatalf("default backend = %s, want %s", got, want)
	}
}

func TestSchemaValidation(t *testing.T) {
	g := grep.New(fixture(t, false), grep.Options{})
	for raw, ok := range map[string]bool{
		`{"pattern":"x"}`: true,
		`{"pattern":"x","path":"a","glob":"*.go","ignoreCase":true,"literal":false,"context":2,"limit":5}`: true,
		`{"pattern":"x","limit":0}`:         false,
		`{"pattern":"x","context":-1}`:      false,
		`{"pattern":"x","limit":1.5}`:       false,
		`{"path":"a"}`:                      false,
		`{"pattern":"x","ignorecase":true}`: false,
		`{"pattern":"x","extra":1}`:         false,
	} {
		_, err := tool.ValidateCall(g, raw)
		var ve *tool.ValidationError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("%s: schema unusable: %v", raw, err)
		}
		if (err == nil) != ok {
			t.Errorf("ValidateCall(%s) = %v, want ok=%v", raw, err, ok)
		}
	}
}
