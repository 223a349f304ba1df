package command

import (
	"path"
	"strings"
)

// UnsafeEnv lists environment variable names (patterns in [path.Match] syntax, matched
// against the upper-cased name) that change what a program runs or loads: dynamic loader
// and interpreter hooks, shell start-up files, git and Go configuration, pagers and editors.
//
// Approved commands never receive them ([Run] drops them and [NewRegistry] refuses to
// allowlist them), and a bash command line that sets one of them cannot be approved by a
// specific allow rule (internal/policy).
var UnsafeEnv = []string{
	"PATH", "CDPATH", "IFS", "GLOBIGNORE",
	"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "BASH_FUNC_*", "PS4", "PROMPT_COMMAND",
	"LD_*", "DYLD_*", "GCONV_PATH", "HOSTALIASES", "LOCPATH", "NLSPATH",
	"GIT_*", "GOFLAGS", "GOENV", "GOTOOLCHAIN", "GOROOT", "GONOSUMDB", "GONOSUMCHECK", "GOINSECURE", "GOSUMDB", "GOTOOLDIR", "CGO_*",
	"CC", "CXX", "CPP", "LD", "AR", "MAKEFLAGS", "MFLAGS", "MAKEFILES",
	"PYTHON*", "NODE_OPTIONS", "NODE_PATH", "NPM_CONFIG_*", "YARN_*", "PERL5*", "PERLLIB", "PERL_MB_OPT", "PERL_MM_OPT",
	"RUBYOPT", "RUBYLIB", "GEM_*", "BUNDLE_*", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"CARGO_*", "RUSTC_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS",
	"LESSOPEN", "LESSCLOSE", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER",
	"SSH_ASKPASS", "SUDO_ASKPASS", "GPG_AGENT_INFO", "RIPGREP_CONFIG_PATH", "TERMINFO",
}

// IsUnsafeEnv reports whether the variable name matches [UnsafeEnv].
func IsUnsafeEnv(name string) bool { return matchEnv(name, UnsafeEnv) }

func matchEnv(name string, patterns []string) bool {
	u := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, _ := path.Match(p, u); ok {
			return true
		}
	}
	return false
}

// ValidEnvName reports whether s is a portable environment variable name: letters, digits
// and "_", not starting with a digit.
func ValidEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
