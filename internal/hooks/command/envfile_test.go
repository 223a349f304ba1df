package command

import (
	"slices"
	"strings"
	"testing"
)

// TestParseEnvFile: the lines SessionStart hooks write (export, quoting, $PATH extension)
// are read without a shell; anything that needs one is a problem naming the line, never
// its value.
func TestParseEnvFile(t *testing.T) {
	file := strings.Join([]string{
		"# written by the nvm hook",
		"export NODE_ENV=production",
		"",
		`export PATH="$HOME/.nvm/bin:$PATH"`,
		"GREETING='hello world'   # a comment",
		`export MIXED=a\ b"c\"d"'$e'`,
		"export WITH_HASH=x#y",
		"export BRACED=${NODE_ENV}-1",
		"export SUB=$(cat /secret/token)",
		"export TICK=\"`id`\"",
		"export TWO=1 THREE=2",
		"unset FOO",
		"export OPEN=\"never closed",
		"export DEFAULTED=${X:-y}",
		"export 1BAD=x",
		"export EMPTY=",
		"export SEMI=a;rm -rf /",
		"export CRLF=yes\r",
	}, "\n")
	env := map[string]string{"HOME": "/home/u", "PATH": "/usr/bin"}
	vars, problems := ParseEnvFile([]byte(file), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want := []string{
		"NODE_ENV=production",
		"PATH=/home/u/.nvm/bin:/usr/bin",
		"GREETING=hello world",
		`MIXED=a bc"d$e`,
		"WITH_HASH=x#y",
		"BRACED=production-1",
		"EMPTY=",
		"CRLF=yes",
	}
	if !slices.Equal(vars, want) {
		t.Errorf("vars:\n got %q\nwant %q", vars, want)
	}
	var lines []int
	for _, p := range problems {
		lines = append(lines, p.Line)
		if strings.Contains(p.String(), "cat /secret") || strings.Contains(p.String(), "never closed") {
			t.Errorf("a problem holds the line's text: %s", p)
		}
	}
	if wantLines := []int{9, 10, 11, 12, 13, 14, 15, 17}; !slices.Equal(lines, wantLines) {
		t.Errorf("problems on lines %v, want %v: %v", lines, wantLines, problems)
	}
	if problems[0].Name != "SUB" || !strings.Contains(problems[0].String(), "line 9 (SUB)") {
		t.Errorf("first problem = %s, want line 9 naming SUB", problems[0])
	}
}

// TestParseEnvFileTooLarge: a file past the bound is read up to the last whole line before it.
func TestParseEnvFileTooLarge(t *testing.T) {
	line := "export A=" + strings.Repeat("x", 100) + "\n"
	data := []byte(strings.Repeat(line, MaxEnvFileBytes/len(line)+2) + "export LAST=1\n")
	vars, problems := ParseEnvFile(data, nil)
	if len(problems) != 1 || !strings.Contains(problems[0].Why, "larger than") {
		t.Fatalf("problems = %v, want one saying the file is too large", problems)
	}
	if len(vars) != MaxEnvFileBytes/len(line) || slices.Contains(vars, "LAST=1") {
		t.Errorf("read %d assignments (LAST included: %v), want %d", len(vars), slices.Contains(vars, "LAST=1"), MaxEnvFileBytes/len(line))
	}
}
