package policy

import (
	"fmt"
	"strings"
)

// optSpec describes the options of a command that runs another command, so its operands can
// be found. Short options are single letters; long options are written without "--".
type optSpec struct {
	flags     string   // short options without a value
	valued    string   // short options with a value ("-u root", "-uroot")
	optional  string   // short options with an optional attached value ("-i", "-i{}")
	longFlags []string // long options without a value; "name=" also accepts an optional "=value"
	longVals  []string // long options with a value ("--user root", "--user=root")
	// numeric accepts "-N" (nice -10).
	numeric bool
}

// opt is one parsed option.
type opt struct {
	name  string // "u" or "user"
	value string
	arg   arg // the value as a word, when it has one
}

// parseOpts reads options from argv[i:] and returns them with the index of the first
// operand. It stops at "--" (skipped) or at the first word that is not an option. An option
// it does not know, or an option word that is not static, is an error: the operand after it
// cannot be found with certainty.
func parseOpts(argv []arg, i int, spec optSpec) ([]opt, int, error) {
	var opts []opt
	for i < len(argv) {
		a := argv[i]
		if !a.static {
			if strings.HasPrefix(a.text, "-") || a.text == "" {
				return nil, 0, fmt.Errorf("the argument %s is not a fixed word, so the command it runs cannot be found", a.src)
			}
			return opts, i, nil
		}
		t := a.text
		switch {
		case t == "--":
			return opts, i + 1, nil
		case t == "-" || !strings.HasPrefix(t, "-"):
			return opts, i, nil
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			full, valued, err := resolveLong(name, spec)
			if err != nil {
				return nil, 0, err
			}
			o := opt{name: full}
			if valued {
				if hasVal {
					o.value, o.arg = val, arg{text: val, static: true, src: shellQuote(val)}
				} else {
					if i+1 >= len(argv) {
						return nil, 0, fmt.Errorf("option --%s needs a value", full)
					}
					i++
					o.value, o.arg = argv[i].text, argv[i]
				}
			} else if hasVal {
				o.value = val
			}
			opts = append(opts, o)
			i++
		default:
			if spec.numeric && isDigits(t[1:]) {
				opts = append(opts, opt{name: "n", value: t[1:]})
				i++
				continue
			}
			cluster := t[1:]
			i++
			for j := 0; j < len(cluster); j++ {
				c := cluster[j]
				switch {
				case strings.IndexByte(spec.flags, c) >= 0:
					opts = append(opts, opt{name: string(c)})
				case strings.IndexByte(spec.optional, c) >= 0:
					rest := cluster[j+1:]
					opts = append(opts, opt{name: string(c), value: rest, arg: arg{text: rest, static: true, src: shellQuote(rest)}})
					j = len(cluster)
				case strings.IndexByte(spec.valued, c) >= 0:
					o := opt{name: string(c)}
					if rest := cluster[j+1:]; rest != "" {
						o.value, o.arg = rest, arg{text: rest, static: true, src: shellQuote(rest)}
					} else {
						if i >= len(argv) {
							return nil, 0, fmt.Errorf("option -%c needs a value", c)
						}
						o.value, o.arg = argv[i].text, argv[i]
						i++
					}
					opts = append(opts, o)
					j = len(cluster)
				default:
					return nil, 0, fmt.Errorf("unknown option -%c in %s", c, a.src)
				}
			}
		}
	}
	return opts, i, nil
}

// resolveLong finds a long option by its full name or an unambiguous prefix (GNU getopt
// accepts "--ignore-env" for "--ignore-environment").
func resolveLong(name string, spec optSpec) (string, bool, error) {
	var hits []string
	valued := map[string]bool{}
	for _, l := range spec.longVals {
		valued[l] = true
	}
	all := append(append([]string{}, spec.longVals...), spec.longFlags...)
	for _, l := range all {
		l = strings.TrimSuffix(l, "=")
		if l == name {
			return l, valued[l], nil
		}
		if strings.HasPrefix(l, name) {
			hits = append(hits, l)
		}
	}
	if len(hits) == 1 && name != "" {
		return hits[0], valued[hits[0]], nil
	}
	return "", false, fmt.Errorf("unknown or ambiguous option --%s", name)
}

func hasOpt(opts []opt, names ...string) (opt, bool) {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return o, true
			}
		}
	}
	return opt{}, false
}

// parsePermuted reads options anywhere in argv[i:], as GNU getopt does when it permutes:
// every word that is not an option is an operand, "--" ends the options (what follows are
// operands). Unknown or computed option words are errors, as in parseOpts.
func parsePermuted(argv []arg, i int, spec optSpec) ([]opt, []arg, error) {
	var opts []opt
	var operands []arg
	for i < len(argv) {
		o, next, err := parseOpts(argv, i, spec)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, o...)
		if next > i && argv[next-1].static && argv[next-1].text == "--" {
			return opts, append(operands, argv[next:]...), nil
		}
		if next >= len(argv) {
			break
		}
		operands = append(operands, argv[next])
		i = next + 1
	}
	return opts, operands, nil
}
