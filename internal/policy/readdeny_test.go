package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/refusal"
)

// The static forms a bash line reads a file by are checked against the read deny rules:
// operands, "=" values, $PWD and $(pwd) expansions (after cd too), variables the line
// assigns, default values, for-loop words and redirections.
func TestCommandReadForms(t *testing.T) {
	dir := "/work/ws"
	p, err := New(Config{Dir: dir, Rules: Rules{Deny: []string{"read(**/.env)"}}})
	if err != nil {
		t.Fatal(err)
	}
	denied := []string{
		"cat .env",
		"cat sub/.env",
		"head -n1 < .env",
		"dd if=.env",
		"dd if=.env of=/dev/stdout",
		"base64 --input=.env",
		`cat "$PWD/.env"`,
		`cat "${PWD}/.env"`,
		`cat $PWD/sub/.env`,
		`cd sub && cat "$PWD/.env"`,
		`cat "$(pwd)/.env"`,
		`f=.env; cat $f`,
		`f=.env; cat "$f"`,
		`f=.env && dd if=$f`,
		`f=.env; dd "if=$f"`,
		`d=sub; cat "$d/.env"`,
		`d=$PWD; f="$d/.env"; cat "$f"`,
		`export f=.env; cat $f`,
		`cat ${f:-.env}`,
		`for f in a .env; do cat "$f"; done`,
		`f=.env; tail < "$f"`,
		`f='.env'; xxd $f`,
		`f=.e; g=${f}nv; strings "$g"`,
		`cat /work/ws/.env`,
		`tar -cf x.tar .env`,
		`cp .env /tmp/x`,
		`bash -c 'f=.env; cat $f'`,
	}
	for _, line := range denied {
		d := p.DecideCommand(line)
		if d.Verdict != Deny || d.Code != CodeDenied || d.Rule != "read(**/.env)" {
			t.Errorf("DecideCommand(%q) = %v %s %q (%s), want a deny by read(**/.env)", line, d.Verdict, d.Code, d.Rule, d.Reason)
		}
	}
	allowed := []string{
		"cat README.md",
		"f=README.md; cat $f",
		`cat "$PWD/README.md"`,
		`cat "$UNKNOWN/.envrc"`,
		"echo .envx",
		`f=a; cat $f.txt`,
	}
	for _, line := range allowed {
		if d := p.DecideCommand(line); d.Verdict == Deny {
			t.Errorf("DecideCommand(%q) = deny (%s), want no deny", line, d.Reason)
		}
	}
	if d := p.DecideCommand(`f=.env; cat "$f"`); !strings.Contains(d.Reason, `"$f" (.env)`) {
		t.Errorf("the refusal does not show the value found: %s", d.Reason)
	}
}

// A read-protected path ($REIN_HOME) is refused to every reading tool and to bash, whatever
// the rules allow; edit is judged as a read as well as a write.
func TestReadProtectedAndEdit(t *testing.T) {
	dir := "/work/ws"
	p, err := New(Config{Dir: dir, ReadProtected: []string{"/work/ws/home"}, ReadExempt: []string{"/work/ws/home/sessions/*/*/rein-bash-*.log"},
		Rules: Rules{Allow: []string{"read", "read(**)", "bash"}, Deny: []string{"read(secret/**)"}, Ask: []string{"read(**/ask.txt)"}}})
	if err != nil {
		t.Fatal(err)
	}
	args := func(k, v string) json.RawMessage { b, _ := json.Marshal(map[string]string{k: v}); return b }
	for _, c := range []struct {
		tool, path string
		v          Verdict
		code       refusal.Code
	}{
		{"read", "home/auth.json", Deny, CodeProtectedPath},
		{"read", "/work/ws/home/trust.json", Deny, CodeProtectedPath},
		{"grep", "home", Deny, CodeProtectedPath},
		{"ls", "home/sessions", Deny, CodeProtectedPath},
		{"read", "homework.txt", Allow, ""},
		{"edit", "secret/x.md", Deny, CodeDenied},
		{"edit", "a/ask.txt", Ask, CodeApprovalRequired},
		{"write", "secret/x.md", NoMatch, ""},
	} {
		d := p.Decide(c.tool, args("path", c.path))
		if d.Verdict != c.v || d.Code != c.code {
			t.Errorf("Decide(%s %s) = %v %s (%s), want %v %s", c.tool, c.path, d.Verdict, d.Code, d.Reason, c.v, c.code)
		}
	}
	for _, line := range []string{"cat home/auth.json", `cat "$PWD/home/auth.json"`, "cat /work/ws/home/sessions/x/ledger.jsonl", "ls home/"} {
		if d := p.DecideCommand(line); d.Verdict != Deny || d.Code != CodeProtectedPath {
			t.Errorf("DecideCommand(%q) = %v %s (%s), want a protected-path deny", line, d.Verdict, d.Code, d.Reason)
		}
	}
	for _, line := range []string{"tail home/sessions/p/s1/rein-bash-12.log", "grep x /work/ws/home/sessions/p/s1/rein-bash-1.log"} {
		if d := p.DecideCommand(line); d.Verdict == Deny {
			t.Errorf("DecideCommand(%q) = deny (%s): the bash tool's full output must stay readable", line, d.Reason)
		}
	}
	if d := p.Decide("read", args("path", "home/sessions/p/s1/rein-bash-1.log")); d.Verdict == Deny {
		t.Errorf("read of a full-output file: %s", d.Reason)
	}
	if d := p.DecidePath(OpRead, "home/auth.json"); d.Verdict != Deny || !strings.Contains(d.Reason, "rein's home directory") {
		t.Errorf("DecidePath(home/auth.json) = %v (%s)", d.Verdict, d.Reason)
	}
	if !p.DeniesReads() {
		t.Error("DeniesReads() = false with read deny rules")
	}
	if q, _ := New(Config{Dir: dir, Rules: Rules{Deny: []string{"write(x)", "grep(y)"}}}); q.DeniesReads() {
		t.Error("DeniesReads() = true without read(…) deny or ask rules")
	}
}

// A tool rein does not know (an MCP tool) is judged by every argument named like a path.
func TestOtherToolPathArguments(t *testing.T) {
	p, err := New(Config{Dir: "/work/ws", ReadProtected: []string{"/work/ws/home"}, Rules: Rules{
		Allow: []string{"mcp_fs"}, Deny: []string{"read(**/.env)", "write(docs/private/**)"}, Ask: []string{"read(ask/**)"}}})
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]Verdict{
		`{"path":".env"}`:                            Deny,
		`{"paths":["a.txt","sub/.env"]}`:             Deny,
		`{"filePath":"/work/ws/x/.env"}`:             Deny,
		`{"uri":"file:///work/ws/.env"}`:             Deny,
		`{"target_file":"docs/private/x.md"}`:        Deny,
		`{"source-dir":"home"}`:                      Deny,
		`{"path":"ask/x"}`:                           Ask,
		`{"query":".env","content":"docs/private/"}`: Allow,
		`{"path":"src/a.go"}`:                        Allow,
		`{"path":".git/config"}`:                     Allow,
	} {
		if d := p.Decide("mcp_fs", json.RawMessage(args)); d.Verdict != want {
			t.Errorf("Decide(mcp_fs %s) = %v (%s), want %v", args, d.Verdict, d.Reason, want)
		}
	}
	if d := p.Decide("mcp_other", json.RawMessage(`{"path":"src/a.go"}`)); d.Verdict != NoMatch {
		t.Errorf("an unruled tool with an innocent path = %v, want no-match", d.Verdict)
	}
}
