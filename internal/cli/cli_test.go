package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/reinhq/rein/internal/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rein": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scripts in testdata/script: each is a txtar archive of files and
// rein invocations with their expected output and exit status.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: filepath.Join("testdata", "script"), Setup: scriptSetup, Condition: scriptCondition})
}

// scriptCondition adds [env:NAME] to the scripts' conditions: true when the test process's
// environment sets NAME to a non-empty value (what opts a script into a slow part).
func scriptCondition(cond string) (bool, error) {
	if name, ok := strings.CutPrefix(cond, "env:"); ok {
		return os.Getenv(name) != "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// scriptSetup gives every CLI script its own $REIN_HOME, no API keys, and the Go caches.
func scriptSetup(env *testscript.Env) error {
	env.Setenv("REIN_HOME", filepath.Join(env.WorkDir, ".rein-home"))
	env.Setenv("ANTHROPIC_API_KEY", "")
	env.Setenv("OPENAI_API_KEY", "")
	// go (for rein demo) needs a cache; share the real one to keep the run fast.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "PATH", "GOFLAGS", "GOTOOLCHAIN"} {
		if val := os.Getenv(v); val != "" {
			env.Setenv(v, val)
		}
	}
	if os.Getenv("GOCACHE") == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			env.Setenv("GOCACHE", filepath.Join(dir, "go-build"))
		}
	}
	if os.Getenv("GOPATH") == "" {
		if home, err := os.UserHomeDir(); err == nil {
			env.Setenv("GOPATH", filepath.Join(home, "go"))
		}
	}
	return nil
}
