package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/strictjson"
)

// AuthFile is the name of the credentials file under $REIN_HOME.
const AuthFile = "auth.json"

// ErrAuthPermissions says auth.json is readable by group or others.
var ErrAuthPermissions = errors.New("auth file permissions are too open")

type authEntry struct {
	APIKey string `json:"apiKey"`
}

// envKeys returns the environment variable holding provider's key, or "".
func envKeys(provider string) string {
	switch provider {
	case llm.ProviderAnthropic:
		return "ANTHROPIC_API_KEY"
	case llm.ProviderOpenAI:
		return "OPENAI_API_KEY"
	case llm.ProviderOpenAICompat:
		return "OPENAI_COMPAT_API_KEY"
	}
	return ""
}

// EnvKey returns the environment variable that holds provider's key, or "".
func EnvKey(provider string) string { return envKeys(provider) }

// TakesKey reports whether provider is one that authenticates with an API key; the script
// provider replays a local scenario file and takes none.
func TakesKey(provider string) bool { return envKeys(provider) != "" }

// KeyedProviders lists the providers that take an API key, in the order of Providers.
func KeyedProviders() []string {
	var out []string
	for _, p := range Providers {
		if TakesKey(p) {
			out = append(out, p)
		}
	}
	return out
}

// KeySource says where a key came from, for status output (never the key itself).
type KeySource string

const (
	KeyFromFlag KeySource = "flag"
	KeyFromEnv  KeySource = "env"
	KeyFromFile KeySource = "auth.json"
	KeyNone     KeySource = "none"
)

// ResolveKey finds provider's key: flag, then environment, then auth.json.
func ResolveKey(home, provider, flag string, getenv func(string) string) (string, KeySource, error) {
	if flag != "" {
		return flag, KeyFromFlag, nil
	}
	if v := envKeys(provider); v != "" {
		if k := getenv(v); k != "" {
			return k, KeyFromEnv, nil
		}
	}
	entries, err := readAuth(home)
	if err != nil {
		return "", KeyNone, err
	}
	if e, ok := entries[provider]; ok && e.APIKey != "" {
		return e.APIKey, KeyFromFile, nil
	}
	return "", KeyNone, nil
}

func readAuth(home string) (map[string]authEntry, error) {
	path := filepath.Join(home, AuthFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o; run: chmod 600 %s", ErrAuthPermissions, path, st.Mode().Perm(), path)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	var entries map[string]authEntry
	if err := strictjson.Unmarshal(buf.Bytes(), &entries); err != nil {
		return nil, fmt.Errorf("%w: %s is not valid: %w (expected {\"anthropic\": {\"apiKey\": \"...\"}})", ErrConfig, path, withoutQuotes(err))
	}
	return entries, nil
}

// quoted matches a Go-quoted string in an error message.
var quoted = lazyre.Regexp{Expr: `"(?:[^"\\]|\\.)*"`}

// withoutQuotes is a parse error of auth.json that quotes no part of the file but its names: a
// syntax error quotes the bytes near it, and an unknown field its name, either of which may be
// part of a key. Each quoted fragment other than a provider name or "apiKey" becomes "…". The
// original error is not kept in the chain (its text is the leak); strictjson.ErrTooLarge, which
// quotes nothing, is returned as it is.
func withoutQuotes(err error) error {
	if errors.Is(err, strictjson.ErrTooLarge) {
		return err
	}
	return errors.New(quoted.Compiled().ReplaceAllStringFunc(err.Error(), func(q string) string {
		if s, uerr := strconv.Unquote(q); uerr == nil && (s == "apiKey" || slices.Contains(Providers, s)) {
			return q
		}
		return `"…"`
	}))
}

// SaveKey stores provider's key in auth.json (mode 0600, written atomically). A provider that
// takes no key ([TakesKey]) is refused.
func SaveKey(home, provider, key string) error {
	if !TakesKey(provider) {
		return fmt.Errorf("%w: provider %q takes no API key (providers with keys: %s)", ErrConfig, provider, strings.Join(KeyedProviders(), ", "))
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return fmt.Errorf("%w: empty key for %s", ErrConfig, provider)
	}
	entries, err := readAuth(home)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = map[string]authEntry{}
	}
	entries[provider] = authEntry{APIKey: key}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(home, AuthFile), append(data, '\n'), 0o600)
}

// StoredProviders lists the providers with a key in auth.json.
func StoredProviders(home string) ([]string, error) {
	entries, err := readAuth(home)
	if err != nil {
		return nil, err
	}
	var out []string
	for p, e := range entries {
		if e.APIKey != "" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}
