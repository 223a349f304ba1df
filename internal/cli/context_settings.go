package cli

import (
	"fmt"
	"io"

	"github.com/reinhq/rein/internal/system"
)

// writeSettingsSources lists the settings files `rein context` read: rein's own, then Claude
// Code's, each with its scope and state (loaded, missing, untrusted, invalid).
func writeSettingsSources(w io.Writer, sources []system.SettingsSource) {
	for _, s := range sources {
		if s.State == "missing" {
			continue
		}
		fmt.Fprintf(w, "settings: %s (%s, %s)\n", s.Path, s.Scope, s.State)
	}
}
