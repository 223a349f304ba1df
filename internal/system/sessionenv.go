package system

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/hooks/command"
)

// sessionEnv is what a session adds to the environment of its bash commands: the settings'
// env (rein's files over Claude Code's), then the assignments SessionStart hooks wrote to
// the env file they were given as CLAUDE_ENV_FILE, read again at each call so a later hook's
// lines apply from the next command on. Lines of the file that are not plain assignments are
// told to the user once each, by line and name, never by value. It is safe for concurrent
// use; the zero value adds nothing.
type sessionEnv struct {
	mu       sync.Mutex
	settings []string // NAME=VALUE, sorted by name
	file     string
	notice   func(string)
	reported map[string]bool
}

// configure sets the settings' variables and the env file (created empty: each rein starts
// it afresh, and SessionStart hooks, which run again on resume, fill it).
func (e *sessionEnv) configure(vars map[string]string, file string, notice func(string)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settings = sortedEnv(vars)
	e.file, e.notice = file, notice
	if file == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("create the directory of the session's env file: %w", err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		return fmt.Errorf("create the session's env file: %w", err)
	}
	return nil
}

// apply returns env with the session's variables set over it.
func (e *sessionEnv) apply(env []string) []string {
	if e == nil {
		return env
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	env = setEnv(env, e.settings)
	if e.file == "" {
		return env
	}
	data, err := readEnvFile(e.file)
	if err != nil {
		e.report("read: " + err.Error())
		return env
	}
	vars, problems := command.ParseEnvFile(data, func(name string) (string, bool) { return lookupEnv(env, name) })
	for _, p := range problems {
		e.report(p.String() + ": ignored")
	}
	return setEnv(env, vars)
}

// report tells the user of a problem with the env file once.
func (e *sessionEnv) report(msg string) {
	if e.notice == nil || e.reported[msg] {
		return
	}
	if e.reported == nil {
		e.reported = map[string]bool{}
	}
	e.reported[msg] = true
	e.notice(fmt.Sprintf("CLAUDE_ENV_FILE %s: %s", e.file, msg))
}

// readEnvFile reads the env file, at most one byte past the parser's bound (so it can tell
// the file is too large); a missing file (a hook removed it) is empty.
func readEnvFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, command.MaxEnvFileBytes+1))
}

// setEnv returns env with each NAME=VALUE of vars replacing any earlier value of NAME.
func setEnv(env, vars []string) []string {
	if len(vars) == 0 {
		return env
	}
	names := map[string]bool{}
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return names[name]
	})
	// Later assignments of a name win: keep only the last of each.
	for i, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		last := !slices.ContainsFunc(vars[i+1:], func(o string) bool { return strings.HasPrefix(o, name+"=") })
		if last {
			out = append(out, kv)
		}
	}
	return out
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// wireEnv gives the bash tool and the hooks the settings' env, and SessionStart hooks (when
// any are configured and there is a bash tool) an env file.
func (rt *Runtime) wireEnv(plan *newSession, s Settings, notice func(string)) error {
	if len(s.Env) > 0 {
		rt.hooks.env = setEnv(os.Environ(), sortedEnv(s.Env))
	}
	if rt.env == nil {
		return nil
	}
	var file string
	if hasSessionStart(s.Hooks) {
		var err error
		if file, err = rt.envFileFor(plan); err != nil {
			return err
		}
	}
	rt.hooks.envFile = file
	return rt.env.configure(s.Env, file, notice)
}

// sortedEnv is vars as NAME=VALUE, sorted by name.
func sortedEnv(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for _, k := range sortedKeys(vars) {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// envFileFor is where a runtime's SessionStart hooks write: in the session's directory, or
// in the runtime's own temporary one without a session.
func (rt *Runtime) envFileFor(plan *newSession) (string, error) {
	dir, err := rt.spillDir(plan)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, command.EnvFileName), nil
}

// hasSessionStart reports whether hooks are configured for SessionStart.
func hasSessionStart(cfg command.Config) bool {
	return len(cfg[command.SessionStart]) > 0
}
