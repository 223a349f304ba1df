package policy

import (
	"fmt"
	"github.com/reinhq/rein/internal/lazy"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/internal/command"
)

// handlers look inside commands that run other commands or change what later commands do.
// A command without a handler is an ordinary part. The table is built on the first command
// checked, not at package load (a process that checks none never builds it).
var handlers lazy.Value[map[string]func(*cmdCtx)]

// handler returns the handler of the command name.
func handler(name string) (func(*cmdCtx), bool) {
	h, ok := handlers.Get(buildHandlers)[name]
	return h, ok
}

func buildHandlers() map[string]func(*cmdCtx) {
	h := map[string]func(*cmdCtx){
		"env":     envCmd,
		"sudo":    sudoCmd,
		"doas":    doasCmd,
		"nice":    wrapper(optSpec{valued: "n", longVals: []string{"adjustment"}, numeric: true}, 0),
		"nohup":   wrapper(optSpec{}, 0),
		"timeout": wrapper(optSpec{flags: "v", valued: "sk", longFlags: []string{"foreground", "preserve-status", "verbose"}, longVals: []string{"signal", "kill-after"}}, 1),
		"stdbuf":  wrapper(optSpec{valued: "ioe", longVals: []string{"input", "output", "error"}}, 0),
		"setsid":  wrapper(optSpec{flags: "cfw", longFlags: []string{"ctty", "fork", "wait"}}, 0),
		"ionice":  ioniceCmd,
		"time":    timeCmd,
		"command": commandCmd,
		"builtin": wrapper(optSpec{}, 0),
		"exec":    wrapper(optSpec{flags: "cl", valued: "a"}, 0),
		"chroot":  chrootCmd,
		"su":      suCmd,
		"runuser": suCmd,
		"xargs":   xargsCmd,
		"find":    findCmd,
		"eval":    evalCmd,
		"trap":    trapCmd,
		"alias":   aliasCmd,
		"source":  sourceCmd,
		".":       sourceCmd,
		"watch":   watchCmd,
		"flock":   flockCmd,
		"busybox": busyboxCmd,
		"cd":      cdCmd,
		"pushd":   cdCmd,
		"popd":    popdCmd,
		"hash":    hashCmd,
		"shopt":   shoptCmd,
	}
	for _, sh := range []string{"bash", "sh", "dash", "ksh", "mksh", "ash", "zsh", "rbash", "lksh", "pdksh", "yash", "posh"} {
		h[sh] = shellCmd
	}
	for _, b := range []string{"export", "declare", "typeset", "local", "readonly", "read", "printf", "mapfile", "readarray", "getopts", "let", "unset"} {
		h[b] = assignCmd
	}
	return h
}

// wrapper handles a command of the form NAME [options] [skip operands] COMMAND [ARGS]: the
// outer part is transparent, the inner command a part of its own.
func wrapper(spec optSpec, skip int) func(*cmdCtx) {
	return func(c *cmdCtx) {
		_, i, err := parseOpts(c.argv, 1, spec)
		if err != nil {
			c.unanalysable("%v; write the command without this wrapper", err)
			return
		}
		i += skip
		c.p.transparent = true
		if i < len(c.argv) {
			c.inner(c.argv[i:], nil)
		}
	}
}

func envCmd(c *cmdCtx) {
	spec := optSpec{
		flags:     "i0v",
		valued:    "uCSPa",
		longFlags: []string{"ignore-environment", "null", "debug", "block-signal=", "default-signal=", "ignore-signal=", "list-signal-handling"},
		longVals:  []string{"unset", "chdir", "split-string", "argv0"},
	}
	argv := c.argv
	for range maxDepth {
		opts, i, err := parseOpts(argv, 1, spec)
		if err != nil {
			c.unanalysable("%v; write the command without env", err)
			return
		}
		if s, ok := hasOpt(opts, "S", "split-string"); ok {
			// env -S 'cmd args' splits the string into words: parse it and start over.
			words, ok := splitWords(s.arg)
			if !ok {
				c.unanalysable("the -S string %s is not a fixed list of words; write the command directly", s.arg.src)
				return
			}
			argv = append(append([]arg{argv[0]}, words...), argv[i:]...)
			continue
		}
		if i < len(argv) && argv[i].static && argv[i].text == "-" {
			i++ // "env -" is "env -i"
		}
		var names []string
		for i < len(argv) {
			a := argv[i]
			if !a.static {
				if strings.Contains(a.text, "=") || a.split {
					c.unanalysable("the argument %s may be a variable assignment or the command; write it literally", a.src)
					return
				}
				break
			}
			name, _, ok := strings.Cut(a.text, "=")
			if !ok || !command.ValidEnvName(name) {
				break
			}
			names = append(names, name)
			i++
		}
		c.p.transparent = true
		for _, n := range names {
			if unsafeEnvName(n) {
				c.p.risky = fmt.Sprintf("it sets %s, which changes what the command runs", n)
			}
		}
		if i < len(argv) {
			c.inner(argv[i:], names)
		}
		return
	}
	c.unanalysable("nested -S options; write the command directly")
}

// splitWords splits a string into shell words (env -S).
func splitWords(a arg) ([]arg, bool) {
	if !a.static {
		return nil, false
	}
	var out []arg
	for w, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).WordsSeq(strings.NewReader(a.text)) {
		if err != nil {
			return out, false
		}
		out = append(out, evalWord(w, a.text))
	}
	return out, true
}

func sudoCmd(c *cmdCtx) {
	spec := optSpec{
		flags:     "ABbEeHiKklnPSsVv",
		valued:    "CDghprtTUu",
		longFlags: []string{"askpass", "background", "bell", "edit", "login", "shell", "stdin", "non-interactive", "preserve-groups", "reset-timestamp", "remove-timestamp", "list", "validate", "version", "help", "set-home", "preserve-env="},
		longVals:  []string{"close-from", "chdir", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user", "chroot"},
	}
	opts, i, err := parseOpts(c.argv, 1, spec)
	if err != nil {
		c.unanalysable("%v; write the command without sudo", err)
		return
	}
	if _, ok := hasOpt(opts, "e", "edit", "l", "list", "v", "validate", "k", "K", "reset-timestamp", "remove-timestamp", "V", "version", "help"); ok {
		return
	}
	var names []string
	for i < len(c.argv) && c.argv[i].static {
		name, _, ok := strings.Cut(c.argv[i].text, "=")
		if !ok || !command.ValidEnvName(name) {
			break
		}
		names = append(names, name)
		i++
	}
	if i >= len(c.argv) {
		return // sudo -s or -i without a command: an interactive shell on /dev/null
	}
	if _, ok := hasOpt(opts, "s", "shell", "i", "login"); ok {
		// The command is passed to a shell: treat the words as a script.
		c.innerScript(joinArgs(c.argv[i:]), syntax.LangBash)
		return
	}
	c.inner(c.argv[i:], names)
}

// joinArgs joins words with spaces into one word (static only if all are).
func joinArgs(argv []arg) arg {
	texts := make([]string, len(argv))
	srcs := make([]string, len(argv))
	static := true
	for i, a := range argv {
		texts[i], srcs[i] = a.text, a.src
		static = static && a.static
	}
	return arg{text: strings.Join(texts, " "), static: static, src: strings.Join(srcs, " ")}
}

func doasCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{flags: "Lns", valued: "uaC"})
	if err != nil {
		c.unanalysable("%v; write the command without doas", err)
		return
	}
	if _, ok := hasOpt(opts, "C", "L"); ok {
		return
	}
	c.inner(c.argv[i:], nil)
}

func ioniceCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{flags: "t", valued: "cnpPu", longFlags: []string{"ignore"}, longVals: []string{"class", "classdata", "pid", "pgid", "uid"}})
	if err != nil {
		c.unanalysable("%v; write the command without ionice", err)
		return
	}
	c.p.transparent = true
	if _, ok := hasOpt(opts, "p", "P", "u", "pid", "pgid", "uid"); ok {
		return
	}
	c.inner(c.argv[i:], nil)
}

func timeCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{flags: "pvaqV", valued: "fo", longFlags: []string{"append", "portability", "verbose", "quiet", "version", "help"}, longVals: []string{"format", "output"}})
	if err != nil {
		c.unanalysable("%v; write the command without time", err)
		return
	}
	if o, ok := hasOpt(opts, "o", "output"); ok {
		c.w.write(o.arg, false)
	}
	c.p.transparent = true
	c.inner(c.argv[i:], nil)
}

func commandCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{flags: "pvV"})
	if err != nil {
		c.unanalysable("%v", err)
		return
	}
	c.p.transparent = true
	if _, ok := hasOpt(opts, "v", "V"); ok {
		return // only describes the command
	}
	c.inner(c.argv[i:], nil)
}

func chrootCmd(c *cmdCtx) {
	_, i, err := parseOpts(c.argv, 1, optSpec{longFlags: []string{"skip-chdir"}, longVals: []string{"userspec", "groups"}})
	if err != nil {
		c.unanalysable("%v", err)
		return
	}
	if i+1 < len(c.argv) {
		c.inner(c.argv[i+1:], nil)
	}
}

// suSpec is su's and runuser's options (util-linux); runuser adds -u USER.
var suSpec = optSpec{flags: "flmpP", valued: "cCgGsuw",
	longFlags: []string{"login", "preserve-environment", "fast", "pty", "help", "version"},
	longVals:  []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment", "user"}}

// suCmd handles su and runuser. Their options may come before or after the user (getopt
// permutes), and words after the user go to the shell ("su root -- -c CMD" runs CMD), so
// every option anywhere is read and what follows the user is judged as a shell's arguments;
// runuser -u USER runs its operands as a command.
func suCmd(c *cmdCtx) {
	opts, operands, err := parsePermuted(c.argv, 1, suSpec)
	if err != nil {
		c.unanalysable("%v", err)
		return
	}
	if len(operands) > 0 && operands[0].static && operands[0].text == "-" {
		operands = operands[1:] // "su -" is su --login
	}
	c.p.transparent = true
	if o, ok := hasOpt(opts, "c", "C", "command", "session-command"); ok {
		c.innerScript(o.arg, syntax.LangBash)
	}
	if _, ok := hasOpt(opts, "u", "user"); ok && c.name == "runuser" {
		c.inner(operands, nil)
		return
	}
	if len(operands) > 1 {
		c.inner(append([]arg{staticArg("sh")}, operands[1:]...), nil)
	}
}

func xargsCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{
		flags:     "0oprtx",
		valued:    "adEILnPs",
		optional:  "iel",
		longFlags: []string{"null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits", "help", "version", "eof=", "replace=", "max-lines="},
		longVals:  []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
	})
	if err != nil {
		c.unanalysable("%v; write the command without xargs", err)
		return
	}
	c.p.transparent = true
	inner := append([]arg{}, c.argv[i:]...)
	if len(inner) == 0 {
		inner = []arg{staticArg("echo")}
	}
	if o, ok := hasOpt(opts, "I", "i", "replace"); ok {
		repl := o.value
		if repl == "" {
			repl = "{}"
		}
		for k := 1; k < len(inner); k++ {
			if strings.Contains(inner[k].text, repl) {
				inner[k] = dynamicArg(inner[k].src)
			}
		}
		if strings.Contains(inner[0].text, repl) {
			c.unanalysable("the command name contains the replacement string %q, so it comes from the input; write it literally", repl)
			return
		}
	} else {
		inner = append(inner, arg{split: true, src: "<input words>"})
	}
	c.inner(inner, nil)
}

func findCmd(c *cmdCtx) {
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		if !a.static {
			continue
		}
		switch a.text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(c.argv) && !(c.argv[j].static && (c.argv[j].text == ";" || c.argv[j].text == "+")) {
				j++
			}
			inner := make([]arg, 0, j-i-1)
			for _, x := range c.argv[i+1 : j] {
				if strings.Contains(x.text, "{}") {
					x = dynamicArg(x.src)
				}
				inner = append(inner, x)
			}
			if len(inner) > 0 && !inner[0].static {
				c.unanalysable("the command after %s is not a fixed word; write it literally", a.text)
				return
			}
			c.inner(inner, nil)
			i = j
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(c.argv) {
				c.w.write(c.argv[i+1], false)
			}
		}
	}
}

func evalCmd(c *cmdCtx) {
	c.p.transparent = true
	if len(c.argv) > 1 {
		c.innerScript(joinArgs(c.argv[1:]), syntax.LangBash)
	}
}

func trapCmd(c *cmdCtx) {
	c.p.transparent = true
	_, i, err := parseOpts(c.argv, 1, optSpec{flags: "lpP"})
	if err != nil {
		c.unanalysable("%v", err)
		return
	}
	ops := c.argv[i:]
	if len(ops) < 2 {
		return // "trap SIG" resets, "trap" lists
	}
	if ops[0].static && (ops[0].text == "-" || ops[0].text == "") {
		return
	}
	c.innerScript(ops[0], syntax.LangBash)
}

func aliasCmd(c *cmdCtx) {
	for _, a := range c.argv[1:] {
		if !a.static {
			c.unanalysable("the alias definition %s is not fixed; write it literally", a.src)
			return
		}
		if _, v, ok := strings.Cut(a.text, "="); ok {
			c.innerScript(arg{text: v, static: true, src: a.src}, syntax.LangBash)
		}
	}
}

func sourceCmd(c *cmdCtx) {
	if len(c.argv) < 2 {
		return
	}
	if !c.argv[1].static {
		c.unanalysable("the file to run, %s, is not a fixed path (a variable or process substitution); run the commands directly", c.argv[1].src)
		return
	}
	if fdPath(c.argv[1].text) {
		stdinShellScript(c, syntax.LangBash, c.argv[1].text)
	}
}

// fdPath reports whether a script path names a file descriptor rather than a file:
// /dev/stdin, /dev/fd/N, /proc/self/fd/N, /proc/<pid>/fd/N, /dev/tty. Running it runs whatever
// the descriptor holds (standard input, a process substitution), not a file on disk.
func fdPath(p string) bool {
	p = path.Clean(p)
	switch {
	case p == "/dev/stdin" || p == "/dev/tty" || strings.HasPrefix(p, "/dev/fd/"):
		return true
	case strings.HasPrefix(p, "/proc/"):
		parts := strings.Split(p, "/") // "", "proc", pid|self|thread-self, "fd", N
		return len(parts) >= 4 && parts[3] == "fd"
	}
	return false
}

// stdinShellScript judges a shell that runs its script from standard input or another
// descriptor: a here-document or here-string on standard input is analysed; anything else
// (a pipe, the terminal, another descriptor) cannot be known in advance.
func stdinShellScript(c *cmdCtx, lang syntax.LangVariant, from string) {
	stdin := from == "" || path.Clean(from) == "/dev/stdin" || strings.HasSuffix(path.Clean(from), "/fd/0")
	body, kind := stdinScript(c.stmt, c.src)
	switch {
	case stdin && kind == stdinDoc:
		c.p.transparent = true
		c.innerScript(body, lang)
	case stdin && kind == stdinFile:
		// like a script file: the part itself is what rules judge
	default:
		c.unanalysable("it reads its script from standard input or a file descriptor (a pipe, the terminal, a process substitution), so what it runs cannot be known in advance; run the commands directly or use %s -c '…'", c.name)
	}
}

func watchCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{
		flags:     "bcdeglprtwx",
		valued:    "nq",
		longFlags: []string{"beep", "color", "no-color", "differences=", "errexit", "chgexit", "precise", "no-rerun", "no-title", "no-wrap", "exec", "help", "version", "no-linewrap"},
		longVals:  []string{"interval", "equexit"},
	})
	if err != nil {
		c.unanalysable("%v; write the command without watch", err)
		return
	}
	c.p.transparent = true
	if i >= len(c.argv) {
		return
	}
	if _, ok := hasOpt(opts, "x", "exec"); ok {
		c.inner(c.argv[i:], nil)
		return
	}
	c.innerScript(joinArgs(c.argv[i:]), syntax.LangPOSIX)
}

func flockCmd(c *cmdCtx) {
	opts, i, err := parseOpts(c.argv, 1, optSpec{
		flags:     "sexunoFhV",
		valued:    "wEc",
		longFlags: []string{"shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "verbose", "help", "version"},
		longVals:  []string{"timeout", "wait", "conflict-exit-code", "command"},
	})
	if err != nil {
		c.unanalysable("%v; write the command without flock", err)
		return
	}
	c.p.transparent = true
	if o, ok := hasOpt(opts, "c", "command"); ok {
		c.innerScript(o.arg, syntax.LangBash)
		return
	}
	// flock FILE -c COMMAND, or flock FILE COMMAND [ARGS].
	if i+2 < len(c.argv) && c.argv[i+1].static && (c.argv[i+1].text == "-c" || c.argv[i+1].text == "--command") {
		c.innerScript(c.argv[i+2], syntax.LangBash)
		return
	}
	if i+1 < len(c.argv) {
		c.inner(c.argv[i+1:], nil)
	}
}

func busyboxCmd(c *cmdCtx) {
	if len(c.argv) > 1 && c.argv[1].static && !strings.HasPrefix(c.argv[1].text, "-") {
		c.p.transparent = true
		c.inner(c.argv[1:], nil)
	}
}

// shellCmd handles bash, sh, zsh…: -c SCRIPT is parsed; a here-document or here-string on
// stdin is parsed; a script file is an ordinary part; a script from a pipe is refused.
func shellCmd(c *cmdCtx) {
	lang := syntax.LangBash
	if c.name == "zsh" {
		lang = syntax.LangZsh
	}
	cmode, smode := false, false
	i := 1
	for i < len(c.argv) {
		a := c.argv[i]
		if !a.static {
			c.unanalysable("the argument %s is not a fixed word; write the shell options literally", a.src)
			return
		}
		t := a.text
		if t == "--" || t == "-" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			i++
			continue
		}
		if len(t) > 1 && (t[0] == '-' || t[0] == '+') {
			for _, ch := range t[1:] {
				switch ch {
				case 'c':
					cmode = true
				case 's':
					smode = true
				case 'o', 'O':
					i++ // takes a value
				}
			}
			i++
			continue
		}
		break
	}
	switch {
	case cmode:
		c.p.transparent = true
		if i < len(c.argv) {
			c.innerScript(c.argv[i], lang)
		}
	case i < len(c.argv) && !smode:
		if !c.argv[i].static {
			c.unanalysable("the script file %s is not a fixed path (a variable or process substitution), so what it runs cannot be known; run the commands directly", c.argv[i].src)
			return
		}
		if fdPath(c.argv[i].text) {
			stdinShellScript(c, lang, c.argv[i].text)
		}
		// A script file: the part itself is what rules judge.
	default:
		stdinShellScript(c, lang, "")
	}
}

type stdinKind int

const (
	stdinNone stdinKind = iota
	stdinDoc
	stdinFile
)

// stdinScript finds what a statement's standard input is: a here-document or here-string
// (returned), a file, or nothing known.
func stdinScript(s *syntax.Stmt, src string) (arg, stdinKind) {
	if s == nil {
		return arg{}, stdinNone
	}
	var body arg
	kind := stdinNone
	for _, r := range s.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			kind = stdinDoc
			if r.Hdoc == nil {
				body = staticArg("")
				continue
			}
			if heredocQuoted(r.Word) {
				body = arg{text: nodeText(r.Hdoc, src), static: true, src: "<here-document>"}
				if lit, ok := singleLit(r.Hdoc); ok {
					body.text = lit
				}
			} else {
				t, static, _ := evalParts(r.Hdoc.Parts, modeHeredoc)
				body = arg{text: t, static: static, src: "<here-document>"}
			}
		case syntax.WordHdoc:
			kind = stdinDoc
			body = evalWord(r.Word, src)
			body.text += "\n"
		case syntax.RdrIn:
			kind = stdinFile
			t := evalWord(r.Word, src)
			if !t.static {
				kind = stdinNone
			}
		}
	}
	return body, kind
}

func singleLit(w *syntax.Word) (string, bool) {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok {
			return l.Value, true
		}
	}
	return "", false
}

// heredocQuoted reports whether a here-document delimiter is quoted, which turns off
// expansion in the body.
func heredocQuoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, `\`) {
				return true
			}
		}
	}
	return false
}

func cdCmd(c *cmdCtx) {
	ops := c.argv[1:]
	for len(ops) > 0 && ops[0].static && strings.HasPrefix(ops[0].text, "-") && ops[0].text != "-" {
		if ops[0].text == "--" {
			ops = ops[1:]
			break
		}
		ops = ops[1:]
	}
	ev := cdEvent{}
	switch {
	case len(ops) == 0:
		ev = cdEvent{} // home, or for pushd a swap: unknown
	case ops[0].static && ops[0].text != "-" && !strings.HasPrefix(ops[0].text, "+") && !c.w.cdpath:
		ev = cdEvent{dir: ops[0].text, known: true}
	}
	c.w.an.cds = append(c.w.an.cds, ev)
}

func popdCmd(c *cmdCtx) {
	// popd returns to a directory already seen; with +N/-N it is unknown.
	if len(c.argv) > 1 {
		c.w.an.cds = append(c.w.an.cds, cdEvent{})
	}
}

func hashCmd(c *cmdCtx) {
	for _, a := range c.argv[1:] {
		if a.static && strings.HasPrefix(a.text, "-") && strings.Contains(a.text, "p") {
			c.w.an.risky = firstNonEmpty(c.w.an.risky, "hash -p changes which program a command name runs")
		}
	}
}

func shoptCmd(c *cmdCtx) {
	for _, a := range c.argv[1:] {
		if !a.static || a.text == "dotglob" || a.text == "globstar" {
			c.w.an.dotglob = true
		}
	}
}

// assignCmd handles builtins that set variables by name (export, read, printf -v…).
func assignCmd(c *cmdCtx) {
	for _, a := range c.argv[1:] {
		if !a.static {
			if c.name != "printf" && c.name != "unset" && c.name != "let" {
				c.w.an.risky = firstNonEmpty(c.w.an.risky, fmt.Sprintf("%s takes a computed argument %s", c.name, a.src))
			}
			continue
		}
		name, _, _ := strings.Cut(a.text, "=")
		name = strings.TrimSuffix(name, "+")
		if c.name == "unset" {
			continue
		}
		c.w.lineRisk(name)
	}
}

// writers records the paths that well-known file-changing commands write.
func (w *walker) writers(name string, argv []arg) {
	operands := func(from int) []arg {
		var ops []arg
		dashdash := false
		for _, a := range argv[from:] {
			if !dashdash && a.static && a.text == "--" {
				dashdash = true
				continue
			}
			if !dashdash && strings.HasPrefix(a.text, "-") && len(a.text) > 1 {
				continue
			}
			ops = append(ops, a)
		}
		return ops
	}
	add := func(as ...arg) {
		for _, a := range as {
			if a.static || a.glob || a.word != nil {
				w.write(a, false)
			}
		}
	}
	targetDir := func() bool {
		for i, a := range argv {
			if a.static && (a.text == "-t" || a.text == "--target-directory") && i+1 < len(argv) {
				add(argv[i+1])
				return true
			}
			if v, ok := strings.CutPrefix(a.text, "--target-directory="); ok && a.static {
				add(staticArg(v))
				return true
			}
		}
		return false
	}
	switch name {
	case "tee", "mv", "ln", "rm", "rmdir", "unlink", "shred", "touch", "truncate", "mkdir", "chmod", "chown", "chgrp", "chattr", "mkfifo", "mknod":
		add(operands(1)...)
	case "cp", "install", "rsync", "scp":
		if !targetDir() {
			if ops := operands(1); len(ops) > 0 {
				add(ops[len(ops)-1])
			}
		}
	case "sed", "perl", "ruby":
		inPlace := false
		for _, a := range argv[1:] {
			if a.static && (a.text == "--in-place" || strings.HasPrefix(a.text, "--in-place=") ||
				strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "i")) {
				inPlace = true
			}
		}
		if inPlace {
			add(operands(1)...)
		}
	case "dd":
		for _, a := range argv[1:] {
			if v, ok := strings.CutPrefix(a.text, "of="); ok && a.static {
				add(staticArg(v))
			}
		}
	case "curl", "wget", "sort":
		valued := map[string][]string{
			"curl": {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar"},
			"wget": {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output"},
			"sort": {"-o", "--output"},
		}[name]
		for i, a := range argv {
			for _, o := range valued {
				if a.static && a.text == o && i+1 < len(argv) {
					add(argv[i+1])
				}
				if v, ok := strings.CutPrefix(a.text, o+"="); ok && a.static && strings.HasPrefix(o, "--") {
					add(staticArg(v))
				}
			}
		}
	}
}
