package system

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveKeyPrecedence(t *testing.T) {
	home := t.TempDir()
	if err := SaveKey(home, "anthropic", "sk-file\n"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(home, AuthFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	cases := []struct {
		flag, envVal, want string
		src                KeySource
	}{
		{"sk-flag", "sk-env", "sk-flag", KeyFromFlag},
		{"", "sk-env", "sk-env", KeyFromEnv},
		{"", "", "sk-file", KeyFromFile},
	}
	for _, c := range cases {
		key, src, err := ResolveKey(home, "anthropic", c.flag, env(map[string]string{"ANTHROPIC_API_KEY": c.envVal}))
		if err != nil || key != c.want || src != c.src {
			t.Errorf("flag %q env %q: got %q from %s (%v), want %q from %s", c.flag, c.envVal, key, src, err, c.want, c.src)
		}
	}
	if _, src, err := ResolveKey(home, "openai", "", env(nil)); err != nil || src != KeyNone {
		t.Errorf("openai: %s %v, want none", src, err)
	}
}

func TestAuthFileMustBePrivateAndStrict(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, AuthFile)
	if err := os.WriteFile(path, []byte(`{"anthropic":{"apiKey":"sk-SECRET"}}`), 0o640); err != nil {
		t.Fatal(err)
	}
	_, _, err := ResolveKey(home, "anthropic", "", env(nil))
	if !errors.Is(err, ErrAuthPermissions) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err = %v, want ErrAuthPermissions naming the fix", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"anthropic":{"apikey":"sk-SECRET"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = ResolveKey(home, "anthropic", "", env(nil))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `did you mean "apiKey"`) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want a strict-parse error that does not show the key", err)
	}
	// A syntax error quotes the bytes near it, and an unknown field its name: inside a key,
	// neither reaches the message (or anything in the error chain).
	for _, body := range []string{
		"{\"anthropic\":{\"apiKey\":\"sk-ant-SECRET\x01\"}}",
		`{"anthropic":{"apiKey" "sk-ant-SECRET"}}`,
		`{"anthropic":{"sk-ant-SECRET":""}}`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err = ResolveKey(home, "anthropic", "", env(nil))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "auth.json is not valid") {
			t.Fatalf("%q: err = %v, want ErrConfig", body, err)
		}
		for e := range chain(err) {
			if strings.Contains(e.Error(), "SECRET") {
				t.Errorf("%q: an error in the chain shows the key: %q", body, e.Error())
			}
		}
	}
}

// chain yields err and every error it wraps.
func chain(err error) func(func(error) bool) {
	return func(yield func(error) bool) {
		var walk func(error) bool
		walk = func(e error) bool {
			if e == nil {
				return true
			}
			if !yield(e) {
				return false
			}
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				return walk(u.Unwrap())
			case interface{ Unwrap() []error }:
				for _, c := range u.Unwrap() {
					if !walk(c) {
						return false
					}
				}
			}
			return true
		}
		walk(err)
	}
}

func TestBuildResolvesProviderAndTools(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := Build(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Tools: []string{"read", "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Model.Provider != "script" || strings.Join(rt.Tools.Names(), ",") != "read,ls" {
		t.Errorf("provider %s tools %v", rt.Model.Provider, rt.Tools.Names())
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no provider configured"},
		{Options{Provider: "anthropic"}, "no API key for anthropic"},
		{Options{Provider: "script"}, "needs --script"},
		{Options{Provider: "anthropic", Script: scenario, APIKey: "k"}, "--script is only for --provider script"},
		{Options{Script: scenario, Tools: []string{"nope"}}, "nope"},
		{Options{Script: scenario, MaxCost: math.NaN()}, "--max-cost: NaN is not a finite number"},
		{Options{Script: scenario, MaxCost: math.Inf(1)}, "--max-cost: +Inf is not a finite number"},
		{Options{Script: scenario, MaxCost: math.Copysign(0, -1)}, "--max-cost: -0 is not 0"},
		{Options{Script: scenario, MaxTurns: -1}, "must not be negative"},
		{Options{Script: scenario, MaxUsageTokens: -1}, "must not be negative"},
	} {
		c.o.Dir, c.o.Home, c.o.Getenv = dir, home, env(nil)
		_, err := Build(c.o)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want a config error containing %q", c.o, err, c.want)
		}
	}
	// A key in the environment selects its provider.
	rt2, err := Build(Options{Dir: dir, Home: home, Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-x"})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if rt2.Model.Provider != "openai" || rt2.Model.ID != "gpt-5" || rt2.KeySource != KeyFromEnv {
		t.Errorf("got %s/%s from %s", rt2.Model.Provider, rt2.Model.ID, rt2.KeySource)
	}
}

func TestSandboxSetting(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte("version: 1\nturns:\n  - text: hi\n"), 0o644)
	os.WriteFile(filepath.Join(home, SettingsFile), []byte(`{"sandbox": true}`), 0o600)
	rt, err := Build(Options{Script: scenario, Dir: dir, Home: home, Getenv: env(nil), Session: SessionChoice{Mode: SessionNone}})
	if _, lookErr := exec.LookPath("bwrap"); lookErr != nil {
		// Without bubblewrap the setting must refuse to run rather than run unsandboxed.
		if err == nil || !strings.Contains(err.Error(), "bubblewrap") {
			t.Fatalf("sandbox setting without bwrap: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	spec, _ := rt.Tools.Spec("bash")
	if !strings.Contains(strings.ToLower(spec.Description), "sandbox") {
		t.Errorf("the settings' sandbox did not reach bash: %q", spec.Description)
	}
	// A project cannot set it.
	proj := filepath.Join(dir, ".rein")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, SettingsFile), []byte(`{"sandbox": true}`), 0o644)
	if _, err := ReadSettings(filepath.Join(proj, SettingsFile), false); err == nil || !strings.Contains(err.Error(), "sandbox setting may only be set") {
		t.Errorf("project sandbox setting: %v", err)
	}
}

// TestSaveKeyRefusesKeylessProviders: the script provider and unknown names take no key, so
// none is ever written for them.
func TestSaveKeyRefusesKeylessProviders(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{"script", "nope"} {
		if err := SaveKey(home, p, "sk-x"); !errors.Is(err, ErrConfig) {
			t.Errorf("SaveKey(%q): %v, want ErrConfig", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, AuthFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("auth.json written for a keyless provider (%v)", err)
	}
	if got := strings.Join(KeyedProviders(), ","); got != "anthropic,openai,openai-compat" {
		t.Errorf("KeyedProviders() = %s", got)
	}
}
