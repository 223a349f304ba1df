package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/refusal"
)

func TestParseRule(t *testing.T) {
	good := []struct {
		in      string
		tool    string
		kind    ruleKind
		tokens  string
		glob    string
		absGlob bool
	}{
		{"edit", "edit", kindTool, "", "", false},
		{" Bash ", "bash", kindTool, "", "", false},
		{"bash(*)", "bash", kindTool, "", "", false},
		{"bash(**)", "bash", kindTool, "", "", false},
		{"bash(git push *)", "bash", kindCommand, "git|push|**", "", false},
		{"Bash(npm run:*)", "bash", kindCommand, "npm|run|**", "", false},
		{"bash(git  commit   -m *)", "bash", kindCommand, "git|commit|-m|**", "", false},
		{`bash(echo a\ b)`, "bash", kindCommand, `echo|a\ b`, "", false},
		{"bash(git * main)", "bash", kindCommand, "git|*|main", "", false},
		{"read(**/.env)", "read", kindPath, "", "**/.env", false},
		{"write(./docs/)", "write", kindPath, "", "docs", false},
		{"read(/etc/**)", "read", kindPath, "", "/etc/**", true},
		{"mcp_search", "mcp_search", kindTool, "", "", false},
	}
	for _, c := range good {
		r, err := ParseRule(c.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", c.in, err)
			continue
		}
		if r.Tool != c.tool || r.kind != c.kind || strings.Join(r.tokens, "|") != c.tokens || r.path.Pattern() != c.glob || r.path.Abs() != c.absGlob || r.Raw != c.in {
			t.Errorf("ParseRule(%q) = %+v", c.in, r)
		}
	}
	for _, in := range []string{"", "  ", "bash(", "bash()", "bash( )", "(x)", "foo bar", "mcp(x)", "read(../x)", "read(a/../../x)", "read([)", `bash(echo \)`, "bash(** x)", "bash(x"} {
		_, err := ParseRule(in)
		if code, _ := refusal.CodeOf(err); code != CodeBadRule {
			t.Errorf("ParseRule(%q) = %v, want a %s error", in, err, CodeBadRule)
		}
	}
	_, err := New(Config{Rules: Rules{Allow: []string{"bash("}, Deny: []string{"x(y)"}}, Protected: []string{"[", ""}})
	if code, _ := refusal.CodeOf(err); code != CodeBadRule || !strings.Contains(err.Error(), `"bash("`) || !strings.Contains(err.Error(), `"x(y)"`) || !strings.Contains(err.Error(), `protected path "["`) {
		t.Errorf("New with bad rules = %v, want every problem listed", err)
	}
	if _, err := New(Config{Dir: "relative"}); err == nil {
		t.Error("relative Dir accepted")
	}
}

func TestWordMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"push", "push", true},
		{"push", "pushx", false},
		{"push*", "pushx", true},
		{"*", "", true},
		{"*", "a/b c", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbb", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"?", "é", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{`\?`, "x", false},
		{"-rf", "-fr", false},
		{"*.go", "main.go", true},
		{"*.go", "main.go.bak", false},
	} {
		if got := wordMatch(c.pat, c.s); got != c.want {
			t.Errorf("wordMatch(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

func TestCommandMatchMayMust(t *testing.T) {
	st := staticArg
	dyn := arg{src: "$x"}              // one unknown word
	spl := arg{split: true, src: "$x"} // any number of unknown words
	cases := []struct {
		pat       string
		argv      []arg
		may, must bool
	}{
		{"git push **", []arg{st("git"), st("push")}, true, true},
		{"git push **", []arg{st("git"), st("push"), st("origin")}, true, true},
		{"git push **", []arg{st("git"), st("pushx")}, false, false},
		{"git push **", []arg{st("git"), dyn}, true, false},
		{"git push **", []arg{st("git"), spl}, true, false},
		{"git push **", []arg{st("git"), st("status"), spl}, false, false},
		{"git status", []arg{st("git"), st("status"), spl}, true, false},
		{"git status", []arg{st("git"), st("status"), dyn}, false, false},
		{"echo **", []arg{st("echo"), spl, dyn}, true, true},
		{"echo *", []arg{st("echo"), spl}, true, true},
		{"cp * dest", []arg{st("cp"), dyn, st("dest")}, true, true},
		{"cp * dest", []arg{st("cp"), spl, st("dest")}, true, false},
		{"rm -rf **", []arg{st("rm"), spl}, true, false},
		{"rm -rf **", []arg{st("rm"), st("-r"), st("-f")}, false, false},
		{"rm **", []arg{st("/bin/rm"), st("x")}, true, false},
		{"/bin/rm **", []arg{st("rm"), st("x")}, true, false},
		{"/bin/rm **", []arg{st("/bin/rm"), st("x")}, true, true},
		{"./tool", []arg{st("./tool")}, true, true},
	}
	for _, c := range cases {
		toks, err := commandTokens(c.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := commandMatch(toks, c.argv, false); got != c.may {
			t.Errorf("may %q %v = %v, want %v", c.pat, c.argv, got, c.may)
		}
		if got := commandMatch(toks, c.argv, true); got != c.must {
			t.Errorf("must %q %v = %v, want %v", c.pat, c.argv, got, c.must)
		}
	}
}

// TestDecidePathAdversarial tries to get a file tool past the path rules and the protected
// paths.
func TestDecidePathAdversarial(t *testing.T) {
	p, err := New(Config{
		Rules: Rules{
			Deny:  []string{"read(**/.env)", "read(/etc/**)", "write(**/*.lock)", "edit(vendor/**)", "webfetch", "grep(private/**)"},
			Ask:   []string{"write(migrations/**)"},
			Allow: []string{"write(docs/**)", "read(**)", "edit", "bash(git status)"},
		},
		Dir: "/ws",
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args string
		want Verdict
		code refusal.Code
	}{
		{"read", `{"path":".env"}`, Deny, CodeDenied},
		{"read", `{"path":"config/.env"}`, Deny, CodeDenied},
		{"read", `{"path":"./config/../.env"}`, Deny, CodeDenied},
		{"read", `{"path":"/ws/.env"}`, Deny, CodeDenied},
		{"read", `{"path":"/ws/sub/../.env"}`, Deny, CodeDenied},
		{"read", `{"path":"@.env"}`, Deny, CodeDenied},
		{"read", `{"path":" .env "}`, Deny, CodeDenied},
		{"read", `{"path":".env\u00a0"}`, Deny, CodeDenied},
		{"read", `{"path":".ENV"}`, Deny, CodeDenied},
		{"read", `{"path":"a//b///.env"}`, Deny, CodeDenied},
		{"read", `{"path":".env/inner"}`, Deny, CodeDenied},
		{"read", `{"path":"/etc/passwd"}`, Deny, CodeDenied},
		{"read", `{"path":"src/main.go"}`, Allow, ""},
		{"read", `{"path":".envrc"}`, Allow, ""},
		{"read", `{"path":"../outside.txt"}`, NoMatch, ""},
		{"grep", `{"pattern":"x","path":".env"}`, Deny, CodeDenied},
		{"grep", `{"pattern":"x","path":"private/a"}`, Deny, CodeDenied},
		{"read", `{"path":"private/a"}`, Allow, ""},
		{"grep", `{"pattern":"x"}`, Allow, ""},
		{"grep", `{"pattern":"x","path":null}`, Allow, ""},
		{"ls", `{}`, Allow, ""},
		{"find", `{"pattern":"*","path":"sub/.env"}`, Deny, CodeDenied},
		{"write", `{"path":"docs/a.md","content":"x"}`, Allow, ""},
		{"write", `{"path":"docs","content":"x"}`, Allow, ""},
		{"write", `{"path":"docs/../src/x.go","content":"x"}`, NoMatch, ""},
		{"write", `{"path":"go.lock","content":"x"}`, Deny, CodeDenied},
		{"write", `{"path":"sub/Cargo.LOCK","content":"x"}`, Deny, CodeDenied},
		{"write", `{"path":"migrations/001.sql","content":"x"}`, Ask, CodeApprovalRequired},
		{"write", `{"path":"vendor/x.go","content":"x"}`, Deny, CodeDenied},
		{"edit", `{"path":"vendor/x.go","edits":[]}`, Deny, CodeDenied},
		{"edit", `{"path":"src/x.go","edits":[]}`, Allow, ""},
		{"write", `{"path":".git/config","content":"x"}`, Deny, CodeProtectedPath},
		{"write", `{"path":".GIT/hooks/pre-commit","content":"x"}`, Deny, CodeProtectedPath},
		{"write", `{"path":"./.git","content":"x"}`, Deny, CodeProtectedPath},
		{"write", `{"path":"/ws/.git/HEAD","content":"x"}`, Deny, CodeProtectedPath},
		{"write", `{"path":"a/b/.git/config","content":"x"}`, Deny, CodeProtectedPath},
		{"write", `{"path":"docs/../.git/config","content":"x"}`, Deny, CodeProtectedPath},
		{"edit", `{"path":".rein/settings.json","edits":[]}`, Deny, CodeProtectedPath},
		{"edit", `{"path":".Rein/SYSTEM.md","edits":[]}`, Deny, CodeProtectedPath},
		{"write", `{"path":"docs/.git/x","content":"x"}`, Deny, CodeProtectedPath},
		{"read", `{"path":".git/config"}`, Allow, ""},
		{"write", `{"path":".github/workflows/x.yml","content":"x"}`, NoMatch, ""},
		{"webfetch", `{"url":"x"}`, Deny, CodeDenied},
		{"WebFetch", `{"url":"x"}`, Deny, CodeDenied},
		{"mcp_other", `{}`, NoMatch, ""},
		{"bash", `{"command":"git status"}`, Allow, ""},
		{"bash", `{"command":"git status; cat .env"}`, Deny, CodeDenied},
		{"bash", `{"command":"git status; cat x"}`, NoMatch, ""},
		// Arguments that cannot be read are refused, not guessed.
		{"read", `{"path":1}`, Deny, CodeBadArguments},
		{"read", `{}`, Deny, CodeBadArguments},
		{"read", `{"path":"a","path":".env"}`, Deny, CodeBadArguments},
		{"read", `{"path":"a","PATH":".env"}`, Deny, CodeBadArguments},
		{"read", `[".env"]`, Deny, CodeBadArguments},
		{"bash", `{}`, Deny, CodeBadArguments},
		{"bash", `{"command":"ls"} {"command":"rm x"}`, Deny, CodeBadArguments},
	}
	for _, c := range cases {
		d := p.Decide(c.tool, json.RawMessage(c.args))
		if d.Verdict != c.want || (c.code != "" && d.Code != c.code) {
			t.Errorf("Decide(%s, %s) = %v %s (rule %q): %s; want %v %s", c.tool, c.args, d.Verdict, d.Code, d.Rule, d.Reason, c.want, c.code)
		}
	}
	// DecidePath ignores whole-tool rules but applies path rules and protection.
	if d := p.DecidePath(OpWrite, "src/x.go"); d.Verdict != NoMatch {
		t.Errorf("DecidePath(write src/x.go) = %+v", d)
	}
	if d := p.DecidePath(OpWrite, ".git/index"); d.Code != CodeProtectedPath {
		t.Errorf("DecidePath(write .git/index) = %+v", d)
	}
	if d := p.DecidePath(OpRead, "a/.env"); d.Verdict != Deny {
		t.Errorf("DecidePath(read a/.env) = %+v", d)
	}
}

func TestProtectedConfig(t *testing.T) {
	none, err := New(Config{Protected: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if d := none.DecideCommand("echo x > .git/config"); d.Verdict != NoMatch {
		t.Errorf("with no protected paths: %+v", d)
	}
	custom, err := New(Config{Protected: []string{"secrets/**", "/abs/**"}, Dir: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"echo x > secrets/a", "cp a /abs/b", "echo x > /ws/secrets/b"} {
		if d := custom.DecideCommand(line); d.Code != CodeProtectedPath {
			t.Errorf("DecideCommand(%q) = %+v, want protected", line, d)
		}
	}
	if d := custom.DecideCommand("echo x > .git/config"); d.Code == CodeProtectedPath {
		t.Errorf("custom list still protects .git: %+v", d)
	}
	// Without a workspace directory, relative paths are still checked.
	noDir, _ := New(Config{})
	if d := noDir.DecideCommand("echo x > .git/config"); d.Code != CodeProtectedPath {
		t.Errorf("no Dir: %+v", d)
	}
}

func TestGlobOperands(t *testing.T) {
	p, err := New(Config{Rules: Rules{
		Deny:  []string{"read(secrets/**)", "write(**/*.lock)"},
		Allow: []string{"bash(chmod *)", "bash(ls *)", "bash(touch *)"},
	}, Dir: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]refusal.Code{
		"chmod -R 777 .g*":     CodeProtectedPath,
		"chmod -R 777 ./.gi?":  CodeProtectedPath,
		"chmod 600 */.git/*":   CodeProtectedPath,
		"chmod 600 .r*/x":      CodeProtectedPath,
		"touch go.*":           CodeDenied,
		"ls secr*":             CodeDenied,
		"ls secrets/*.pem":     CodeDenied,
		"ls s*/key":            CodeDenied,
		"chmod 644 *":          CodeDenied, // * may be secrets, as "chmod 644 secrets" is denied
		"chmod 644 [t-z]*.go":  "",
		"chmod 644 *.go":       "",
		"ls *.go":              "",
		"ls src/*":             "",
		"touch a.*":            CodeDenied, // a.* may be a.lock
		"ls other/secrets/*":   "",
		"chmod 644 docs/*.md":  "",
		"ls ./*/":              CodeDenied,
		"ls ./*.go":            "",
		"ls [a-r]*":            "",
		"ls [a-z]*":            CodeDenied,
		"shopt -s dotglob; ls": "",
	} {
		d := p.DecideCommand(line)
		if d.Code != want || want == "" && d.Verdict == Deny {
			t.Errorf("DecideCommand(%q) = %v %s: %s; want %q", line, d.Verdict, d.Code, d.Reason, want)
		}
	}
}

func TestDecisionErr(t *testing.T) {
	p := testPolicy(t)
	d := p.DecideCommand("rm -rf /")
	err := d.Err()
	var pe *refusal.Error
	if !errors.As(err, &pe) || pe.Code != CodeDenied || !strings.Contains(err.Error(), "bash(rm *)") || !strings.Contains(err.Error(), "do not retry") {
		t.Errorf("Err() = %v", err)
	}
	if !errors.Is(err, &refusal.Error{Code: CodeDenied}) {
		t.Error("errors.Is by code failed")
	}
	if p.DecideCommand("git status").Err() != nil {
		t.Error("Allow has an error")
	}
	if d := p.DecideCommand("git reset --hard"); !strings.Contains(d.Err().Error(), "approval") {
		t.Errorf("Ask error %v", d.Err())
	}
	for _, v := range []Verdict{NoMatch, Allow, Ask, Deny, Verdict(9)} {
		if v.String() == "" {
			t.Errorf("empty String for %d", v)
		}
	}
}

func TestWholeToolBashRules(t *testing.T) {
	deny, _ := New(Config{Rules: Rules{Deny: []string{"bash"}, Allow: []string{"bash(ls)"}}})
	if d := deny.DecideCommand("ls"); d.Verdict != Deny {
		t.Errorf("deny bash: %+v", d)
	}
	ask, _ := New(Config{Rules: Rules{Ask: []string{"Bash"}, Allow: []string{"bash(*)"}}})
	if d := ask.DecideCommand("ls"); d.Verdict != Ask {
		t.Errorf("ask bash: %+v", d)
	}
	all, _ := New(Config{Rules: Rules{Allow: []string{"bash(*)"}, Deny: []string{"bash(rm *)"}}})
	for line, want := range map[string]Verdict{
		"ls; make test":                 Allow,
		"LD_PRELOAD=x git status":       Allow, // the user allowed everything
		"make && rm x":                  Deny,
		"$CMD":                          Deny, // unanalysable, even under allow-all
		"echo x > .git/config":          Deny,
		"python3 -c 'import os'":        Allow,
		"FOO=1":                         Allow,
		"echo hi | sh":                  Deny,
		"cat <<EOF | bash\nrm x\nEOF\n": Deny,
	} {
		if d := all.DecideCommand(line); d.Verdict != want {
			t.Errorf("allow-all %q = %+v, want %v", line, d, want)
		}
	}
	none, _ := New(Config{})
	if d := none.DecideCommand("x=1"); d.Verdict != NoMatch {
		t.Errorf("assignment only: %+v", d)
	}
}

func TestPatternsIntersect(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"*.go", "*.lock", false},
		{"go.*", "*.lock", true},
		{"*", ".env", true},
		{".e*", ".env", true},
		{".e*", ".git", false},
		{"[a-c]*", "b.txt", true},
		{"[a-c]*", "d.txt", false},
		{"[!a]x", "ax", false},
		{"a?c", "a*", true},
		{"a?c", "b*", false},
		{"*a*", "*b*", true},
		{`\*`, "*", true},
	} {
		if got := patternsIntersect(globTokens(c.a), globTokens(c.b)); got != c.want {
			t.Errorf("patternsIntersect(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
