package cli

import (
	"fmt"

	"github.com/reinhq/rein/internal/termtext"
)

// notice returns the function system.Options.Notice calls: one "rein: ..." line on stderr (a
// hook that failed, a hook's message to the user).
func notice(e *env) func(string) {
	return func(msg string) { fmt.Fprintf(e.stderr, "rein: %s\n", termtext.Visible(msg)) }
}
