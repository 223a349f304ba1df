package policy

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reinhq/rein/internal/refusal"
)

// Limits of the command-line analysis. Past them a line is refused, never waved through.
const (
	maxLineBytes = 256 << 10 // a command line longer than this is refused
	maxDepth     = 12        // nesting of bash -c, eval, env -S, wrappers…
	maxParts     = 512       // simple commands in one line
)

// part is one simple command the line would run.
type part struct {
	argv []arg
	// transparent: a wrapper (env, nice, timeout, bash -c, eval…) whose inner command is a
	// part of its own; an allow decision needs the inner part only.
	transparent bool
	// risky says why no specific allow rule may approve the part (it sets LD_PRELOAD…).
	risky string
	// via names the construct the part was found in ("bash -c", "find -exec"), for messages.
	via string
}

func (p *part) String() string {
	words := make([]string, len(p.argv))
	for i, a := range p.argv {
		words[i] = a.src
		if words[i] == "" {
			words[i] = shellQuote(a.text)
		}
	}
	return strings.Join(words, " ")
}

// pathRef is a path the line reads or writes.
type pathRef struct {
	a arg
	// redirect: the path is the target of a redirection (not an argument).
	redirect bool
}

// cdEvent is one directory change: the target when known.
type cdEvent struct {
	dir   string
	known bool
}

// analysis is what a command line would do, as far as its text tells.
type analysis struct {
	parts  []*part
	writes []pathRef
	reads  []pathRef
	cds    []cdEvent
	// vars holds every value the line assigns to each variable (see recordVar).
	vars map[string][]*syntax.Word
	// risky says why the whole line may not be approved by a specific allow rule (it
	// exports PATH…); empty when it may.
	risky string
	// dotglob: the line may make wildcards match names starting with a dot.
	dotglob bool
	err     *refusal.Error
}

// analyse parses a bash command line and collects every simple command, redirection and
// directory change in it.
func analyse(line string) *analysis {
	a := &analysis{}
	if len(line) > maxLineBytes {
		a.err = errorf(CodeUnanalysable, "the command line is %d bytes, more than the %d that are analysed; split it into smaller commands", len(line), maxLineBytes)
		return a
	}
	(&walker{an: a}).script(line, 0, syntax.LangBash, "")
	return a
}

type walker struct {
	an *analysis
	// cdpath: the line sets CDPATH, so cd targets cannot be resolved.
	cdpath bool
}

func (w *walker) fail(code refusal.Code, format string, args ...any) {
	if w.an.err == nil {
		w.an.err = errorf(code, format, args...)
	}
}

func (w *walker) failed() bool { return w.an.err != nil }

// script parses and walks a script: the whole line, or the text of bash -c, eval, trap….
func (w *walker) script(src string, depth int, lang syntax.LangVariant, via string) {
	if w.failed() {
		return
	}
	if depth > maxDepth {
		w.fail(CodeUnanalysable, "commands are nested more than %d levels deep (bash -c, eval, wrappers); run the inner command directly", maxDepth)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		what := "the command line"
		if via != "" {
			what = "the script given to " + via
		}
		w.fail(CodeUnparseable, "%s does not parse as a shell script (%v); fix the quoting or split it into simpler commands", what, err)
		return
	}
	// Pipe right-hand sides and similar bookkeeping are not needed: every statement is
	// visited, in source order.
	syntax.Walk(f, func(n syntax.Node) bool {
		if w.failed() {
			return false
		}
		switch x := n.(type) {
		case *syntax.Stmt:
			w.stmt(x, src, depth, via)
		case *syntax.DeclClause:
			w.decl(x, src, via)
		case *syntax.ForClause:
			if wi, ok := x.Loop.(*syntax.WordIter); ok && wi.Name != nil {
				for _, item := range wi.Items {
					w.recordVar(wi.Name.Value, item)
				}
			}
		case *syntax.FuncDecl:
			// The body is walked like any other code: what it would run is judged whether
			// or not the function is called.
		}
		return !w.failed()
	})
}

func (w *walker) stmt(s *syntax.Stmt, src string, depth int, via string) {
	for _, r := range s.Redirs {
		w.redirect(r, src)
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || w.failed() {
		return
	}
	var envNames []string
	for _, as := range call.Assigns {
		if as.Name != nil {
			envNames = append(envNames, as.Name.Value)
			if !as.Append {
				w.recordVar(as.Name.Value, as.Value)
			}
		}
	}
	if len(call.Args) == 0 {
		// Plain assignments change the shell's own variables: PATH=…, IFS=… affect the
		// commands that follow.
		for _, n := range envNames {
			w.lineRisk(n)
		}
		return
	}
	argv := make([]arg, len(call.Args))
	for i, word := range call.Args {
		argv[i] = evalWord(word, src)
	}
	if !argv[0].static {
		w.fail(CodeUnanalysable, "the command name %s is not a fixed word (it is built from a variable, command substitution, glob or brace expansion), so what runs cannot be known in advance; write the command name literally", argv[0].src)
		return
	}
	w.command(argv, envNames, s, src, depth, via)
}

// lineRisk records a variable assignment that changes how later commands run.
func (w *walker) lineRisk(name string) {
	if strings.EqualFold(name, "CDPATH") {
		w.cdpath = true
	}
	if strings.EqualFold(name, "GLOBIGNORE") {
		w.an.dotglob = true
	}
	if w.an.risky == "" && unsafeEnvName(name) {
		w.an.risky = fmt.Sprintf("the line sets %s, which changes what later commands run", name)
	}
}

func (w *walker) decl(d *syntax.DeclClause, src, via string) {
	p := &part{argv: []arg{staticArg(d.Variant.Value)}, via: via}
	for _, as := range d.Args {
		switch {
		case as.Name != nil:
			w.lineRisk(as.Name.Value)
			if !as.Append {
				w.recordVar(as.Name.Value, as.Value)
			}
			v := as.Name.Value
			a := staticArg(v)
			if as.Value != nil {
				val := evalWord(as.Value, src)
				a = arg{text: v + "=" + val.text, static: val.static, src: nodeText(as, src)}
			} else if as.Array != nil {
				a = arg{text: v + "=(…)", src: nodeText(as, src)}
			}
			p.argv = append(p.argv, a)
		case as.Value != nil:
			val := evalWord(as.Value, src)
			if !val.static {
				w.an.risky = firstNonEmpty(w.an.risky, fmt.Sprintf("%s takes a computed argument %s", d.Variant.Value, val.src))
			} else {
				name, _, _ := strings.Cut(val.text, "=")
				w.lineRisk(strings.TrimSuffix(name, "+"))
			}
			p.argv = append(p.argv, val)
		}
	}
	w.addPart(p)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (w *walker) addPart(p *part) {
	if len(w.an.parts) >= maxParts {
		w.fail(CodeUnanalysable, "the command line holds more than %d commands; split it", maxParts)
		return
	}
	w.an.parts = append(w.an.parts, p)
	// Every argument is a path the command may read, and so is the text after "=" of one
	// (dd if=PATH, --file=PATH). A computed argument is expanded when checked (candidates).
	for _, a := range p.argv[1:] {
		if !a.static && !a.glob && a.word == nil {
			continue
		}
		w.an.reads = append(w.an.reads, pathRef{a: a})
		if !a.static && !a.glob {
			continue
		}
		if _, v, ok := strings.Cut(a.text, "="); ok && v != "" {
			w.an.reads = append(w.an.reads, pathRef{a: arg{text: v, static: a.static, glob: a.glob, src: a.src}})
		}
	}
}

func (w *walker) write(a arg, redirect bool) {
	w.an.writes = append(w.an.writes, pathRef{a: a, redirect: redirect})
}

func (w *walker) redirect(r *syntax.Redirect, src string) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return // data, not a path; a shell reading it is handled with the command
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // >(cmd): a pipe to a command that is analysed as a part
		}
	}
	t := evalWord(r.Word, src)
	switch r.Op {
	case syntax.RdrIn:
		w.an.reads = append(w.an.reads, pathRef{a: t, redirect: true})
		return
	case syntax.DplIn:
		if t.static && (isDigits(t.text) || t.text == "-") {
			return
		}
		w.an.reads = append(w.an.reads, pathRef{a: t, redirect: true})
		return
	case syntax.DplOut:
		if t.static && (isDigits(t.text) || t.text == "-") {
			return // fd duplication or close
		}
	case syntax.RdrInOut:
		w.an.reads = append(w.an.reads, pathRef{a: t, redirect: true})
	}
	// Everything else writes to the target.
	if !t.static {
		w.fail(CodeUnanalysable, "the redirection target %s is not a fixed path (it uses a variable, substitution or glob), so it cannot be checked against the protected paths; write the file name literally", t.src)
		return
	}
	w.write(t, true)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// command records one simple command and looks inside the commands it runs.
func (w *walker) command(argv []arg, envNames []string, s *syntax.Stmt, src string, depth int, via string) {
	if w.failed() {
		return
	}
	if depth > maxDepth {
		w.fail(CodeUnanalysable, "commands are nested more than %d levels deep (bash -c, eval, wrappers); run the inner command directly", maxDepth)
		return
	}
	if !argv[0].static {
		w.fail(CodeUnanalysable, "the command run by %s, %s, is not a fixed word, so what runs cannot be known in advance; write the command name literally", via, argv[0].src)
		return
	}
	p := &part{argv: argv, via: via}
	for _, n := range envNames {
		if unsafeEnvName(n) {
			p.risky = fmt.Sprintf("it sets %s, which changes what the command runs", n)
			break
		}
	}
	w.addPart(p)
	if w.failed() {
		return
	}
	name := path.Base(argv[0].text)
	h, ok := handler(name)
	if !ok {
		w.writers(name, argv)
		return
	}
	h(&cmdCtx{w: w, p: p, argv: argv, stmt: s, src: src, depth: depth, name: name})
}

// cmdCtx is what a command handler needs.
type cmdCtx struct {
	w     *walker
	p     *part
	argv  []arg
	stmt  *syntax.Stmt
	src   string
	depth int
	name  string
}

// inner records the command a wrapper runs.
func (c *cmdCtx) inner(argv []arg, envNames []string) {
	if len(argv) == 0 {
		return
	}
	c.w.command(argv, envNames, c.stmt, c.src, c.depth+1, c.name)
}

// innerScript analyses script text that c's command runs.
func (c *cmdCtx) innerScript(a arg, lang syntax.LangVariant) {
	if !a.static {
		c.w.fail(CodeUnanalysable, "%s runs a script that is computed when the line runs (%s), so what it does cannot be known in advance; run the commands directly", c.name, a.src)
		return
	}
	c.w.script(a.text, c.depth+1, lang, c.name)
}

func (c *cmdCtx) unanalysable(format string, args ...any) {
	c.w.fail(CodeUnanalysable, "%s: %s", c.name, fmt.Sprintf(format, args...))
}
