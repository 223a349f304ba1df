package policy

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
// specific allow rule.
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

// lineUnsafeEnv adds the names that matter when a command line sets them itself: they point
// programs at other configuration files.
var lineUnsafeEnv = []string{"HOME", "XDG_CONFIG_HOME", "GOPATH", "GOMODCACHE", "GOPROXY"}

// unsafeEnvName reports whether a command line setting name must not be approved by a
// specific allow rule: name matches [UnsafeEnv] or lineUnsafeEnv.
func unsafeEnvName(name string) bool {
	return matchEnv(name, UnsafeEnv) || matchEnv(name, lineUnsafeEnv)
}

func matchEnv(name string, patterns []string) bool {
	u := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, _ := path.Match(p, u); ok {
			return true
		}
	}
	return false
}
