package policy

import (
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits of the expansion of words whose value is computed from variables.
const (
	maxCandidates = 64 // values one word may take; past it the word is not expanded
	maxVarDepth   = 8  // variables defined through other variables
)

// recordVar notes a value the line may give the variable name (f=.env, export f=.env,
// for f in .env). Every assignment counts, wherever it lies in the line: branches and loops
// make the order unreliable, so a word using $f may take any of them.
func (w *walker) recordVar(name string, value *syntax.Word) {
	if name == "" || value == nil {
		return
	}
	if w.an.vars == nil {
		w.an.vars = map[string][]*syntax.Word{}
	}
	w.an.vars[name] = append(w.an.vars[name], value)
}

// candidates returns the path references ref stands for: ref itself when its value is
// known (or a glob), else the values its word may take given the variables the line sets,
// $PWD (the workspace, or a directory the line cd's into), $HOME and $(pwd). A value whose
// word part is unknown ($(cmd), a variable from the environment) yields nothing: only
// static forms are checked (the sandbox is what bounds the rest). With splitEq, the text
// after the first "=" of a value is a reference too (dd if=$f, --file=$f).
func (p *Policy) candidates(ref pathRef, an *analysis, splitEq bool) []pathRef {
	if ref.a.static || ref.a.glob {
		return []pathRef{ref}
	}
	if ref.a.word == nil {
		return nil
	}
	vals, ok := p.wordValues(ref.a.word, an, 0)
	if !ok {
		return nil
	}
	var out []pathRef
	for _, v := range vals {
		out = append(out, pathRef{a: arg{text: v, static: true, src: ref.a.src}, redirect: ref.redirect})
		if _, after, found := strings.Cut(v, "="); splitEq && found && after != "" {
			out = append(out, pathRef{a: arg{text: after, static: true, src: ref.a.src}, redirect: ref.redirect})
		}
	}
	return out
}

// wordValues returns the values a word may take, as far as the line tells; ok is false when
// some part cannot be known (or there would be more than maxCandidates values).
func (p *Policy) wordValues(w *syntax.Word, an *analysis, depth int) ([]string, bool) {
	vals := []string{""}
	for i, part := range w.Parts {
		var pv []string
		switch x := part.(type) {
		case *syntax.Lit:
			s := x.Value
			if i == 0 && (s == "~" || strings.HasPrefix(s, "~/")) {
				home, err := os.UserHomeDir()
				if err != nil {
					return nil, false
				}
				s = home + strings.TrimPrefix(s, "~")
			} else if i == 0 && strings.HasPrefix(s, "~") {
				return nil, false
			}
			text, meta := unescapeUnquoted(s)
			if meta {
				return nil, false
			}
			pv = []string{text}
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				d, ok := ansiC(v)
				if !ok {
					return nil, false
				}
				v = d
			}
			pv = []string{v}
		case *syntax.DblQuoted:
			var ok bool
			if pv, ok = p.partsValues(x.Parts, an, depth); !ok {
				return nil, false
			}
		default:
			var ok bool
			if pv, ok = p.expansionValues(part, an, depth); !ok {
				return nil, false
			}
		}
		if vals = product(vals, pv); vals == nil {
			return nil, false
		}
	}
	return vals, true
}

// partsValues evaluates the parts of a double-quoted string.
func (p *Policy) partsValues(parts []syntax.WordPart, an *analysis, depth int) ([]string, bool) {
	vals := []string{""}
	for _, part := range parts {
		var pv []string
		if lit, ok := part.(*syntax.Lit); ok {
			pv = []string{unescapeDouble(lit.Value, modeDouble)}
		} else {
			var ok bool
			if pv, ok = p.expansionValues(part, an, depth); !ok {
				return nil, false
			}
		}
		if vals = product(vals, pv); vals == nil {
			return nil, false
		}
	}
	return vals, true
}

// expansionValues evaluates $NAME, ${NAME}, ${NAME:-WORD} (and -, =, :=) and $(pwd).
func (p *Policy) expansionValues(part syntax.WordPart, an *analysis, depth int) ([]string, bool) {
	switch x := part.(type) {
	case *syntax.ParamExp:
		if x.Param == nil || x.Flags != nil || x.Excl || x.Length || x.Width || x.IsSet || x.NestedParam != nil ||
			x.Index != nil || len(x.Modifiers) > 0 || x.Slice != nil || x.Repl != nil || x.Names != 0 {
			return nil, false
		}
		known, ok := p.varValues(x.Param.Value, an, depth)
		if x.Exp == nil {
			return known, ok
		}
		switch x.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		default:
			return nil, false
		}
		var def []string
		if x.Exp.Word != nil {
			if def, ok = p.wordValues(x.Exp.Word, an, depth+1); !ok {
				return known, len(known) > 0
			}
		} else {
			def = []string{""}
		}
		return append(known, def...), true
	case *syntax.CmdSubst:
		if isPwd(x) {
			return p.pwdValues(an)
		}
	}
	return nil, false
}

// isPwd reports whether a command substitution is $(pwd) (or $(pwd -L), $(pwd -P)).
func isPwd(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || len(call.Args) > 2 || len(cs.Stmts[0].Redirs) > 0 {
		return false
	}
	for i, w := range call.Args {
		v, ok := singleLit(w)
		if !ok || i == 0 && v != "pwd" || i == 1 && v != "-L" && v != "-P" {
			return false
		}
	}
	return true
}

// varValues returns the values a variable may have: PWD and HOME are known; any other
// variable has the values the line assigns to it, and none is known otherwise.
func (p *Policy) varValues(name string, an *analysis, depth int) ([]string, bool) {
	switch name {
	case "PWD":
		return p.pwdValues(an)
	case "HOME":
		if _, set := an.vars[name]; !set {
			home, err := os.UserHomeDir()
			return []string{home}, err == nil
		}
	}
	words := an.vars[name]
	if len(words) == 0 || depth >= maxVarDepth {
		return nil, false
	}
	var out []string
	for _, w := range words {
		vals, ok := p.wordValues(w, an, depth+1)
		if !ok {
			continue // that value is unknown; the others are still checked
		}
		out = append(out, vals...)
	}
	if len(out) == 0 || len(out) > maxCandidates {
		return nil, false
	}
	return out, true
}

// pwdValues are the absolute directories the line may run in: the workspace and every
// directory it cd's into (when known).
func (p *Policy) pwdValues(an *analysis) ([]string, bool) {
	if p.dir == "" {
		return nil, false
	}
	dirs, _ := cwds(an.cds)
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if path.IsAbs(d) {
			out = append(out, path.Clean(d))
		} else {
			out = append(out, path.Join(p.dir, d))
		}
	}
	return out, true
}

// product concatenates every value of a with every value of b; nil past maxCandidates.
func product(a, b []string) []string {
	if len(a)*len(b) > maxCandidates {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}
