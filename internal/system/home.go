package system

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrConfig wraps every configuration problem (the CLI maps it to the usage exit code).
var ErrConfig = errors.New("configuration error")

// Home returns $REIN_HOME, or ~/.rein.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("REIN_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("%w: cannot find a home directory; set REIN_HOME", ErrConfig)
		}
	}
	return filepath.Join(home, ".rein"), nil
}
