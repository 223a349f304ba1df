package policy

import (
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/command"
)

// lineUnsafeEnv adds to [command.UnsafeEnv] the names that matter when a command line sets
// them itself: they point programs at other configuration files.
var lineUnsafeEnv = []string{"HOME", "XDG_CONFIG_HOME", "GOPATH", "GOMODCACHE", "GOPROXY"}

// unsafeEnvName reports whether a command line setting name must not be approved by a
// specific allow rule: name matches [command.UnsafeEnv] or lineUnsafeEnv.
func unsafeEnvName(name string) bool {
	return command.IsUnsafeEnv(name) || slices.Contains(lineUnsafeEnv, strings.ToUpper(name))
}
