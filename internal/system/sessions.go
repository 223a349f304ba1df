package system

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// ErrNoSession says a session reference matched nothing (or nothing unambiguous).
var ErrNoSession = errors.New("session not found")

// SessionsRoot is where every session lives: $REIN_HOME/sessions.
func SessionsRoot(home string) string { return filepath.Join(home, "sessions") }

// ProjectKey names a working directory's session folder: the path with separators turned into
// dashes (readable) plus a short hash (unique).
func ProjectKey(cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	name := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '-'
	}, cwd), "-")
	if len(name) > 80 {
		name = name[len(name)-80:]
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

// ProjectSessions is the session folder of a working directory.
func ProjectSessions(home, cwd string) string {
	return filepath.Join(SessionsRoot(home), ProjectKey(cwd))
}

// SessionDir is one session's directory on disk.
type SessionDir struct {
	// ID is the session the directory holds (see SessionIDOf): opening it refuses a ledger
	// whose header names another session.
	ID      string
	Dir     string
	Updated time.Time // the ledger file's modification time
}

// ListSessions returns the sessions under root (a project folder, or SessionsRoot for all),
// most recently updated first.
func ListSessions(root string) ([]SessionDir, error) {
	var out []SessionDir
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || d.Name() != "ledger.jsonl" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		dir := filepath.Dir(path)
		out = append(out, SessionDir{ID: filepath.Base(dir), Dir: dir, Updated: info.ModTime()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, err
}

// FindSession resolves ref — a path to a session directory or ledger file, a session id, or a
// unique id prefix — looking in the project's sessions first, then in all sessions.
func FindSession(home, cwd, ref string) (SessionDir, error) {
	if ref == "" {
		return SessionDir{}, fmt.Errorf("%w: empty session reference", ErrNoSession)
	}
	if strings.ContainsRune(ref, filepath.Separator) || strings.HasSuffix(ref, ".jsonl") {
		dir := ref
		if strings.HasSuffix(ref, ".jsonl") {
			dir = filepath.Dir(ref)
		}
		info, err := os.Stat(filepath.Join(dir, "ledger.jsonl"))
		if err != nil {
			return SessionDir{}, fmt.Errorf("%w: no session ledger at %s", ErrNoSession, dir)
		}
		abs, _ := filepath.Abs(dir)
		return SessionDir{ID: SessionIDOf(abs), Dir: abs, Updated: info.ModTime()}, nil
	}
	for _, root := range []string{ProjectSessions(home, cwd), SessionsRoot(home)} {
		all, err := ListSessions(root)
		if err != nil {
			return SessionDir{}, err
		}
		var matches []SessionDir
		for _, s := range all {
			if s.ID == ref {
				return s, nil
			}
			if strings.HasPrefix(s.ID, ref) {
				matches = append(matches, s)
			}
		}
		if len(matches) == 1 {
			return matches[0], nil
		}
		if len(matches) > 1 {
			return SessionDir{}, fmt.Errorf("%w: %q matches %d sessions; give more of the id", ErrNoSession, ref, len(matches))
		}
	}
	return SessionDir{}, fmt.Errorf("%w: no session %q (see rein session ls)", ErrNoSession, ref)
}

// LatestSession returns the most recently updated session of the working directory that was
// ever completely created: a session's header is made durable with its first model call, so a
// power loss before that can leave a directory whose ledger has no complete first line, which
// nothing was recorded in; continuing skips it (rein session ls still lists it).
func LatestSession(home, cwd string) (SessionDir, error) {
	all, err := ListSessions(ProjectSessions(home, cwd))
	if err != nil {
		return SessionDir{}, err
	}
	for _, sd := range all {
		if ledger.HasHeaderLine(sd.Dir, ledger.Options{}) {
			return sd, nil
		}
	}
	return SessionDir{}, fmt.Errorf("%w: no session in this directory yet to continue (start one with rein -p)", ErrNoSession)
}

// SessionIDOf is the id of the session a directory holds: the directory's name (rein names a
// session's directory by its id), except for a delivery run's stage session,
// runs/<run>/stages/<stage>-<n>[.<k>] under $REIN_HOME, whose id is <run>-<stage>-<n>.
func SessionIDOf(dir string) string {
	base := filepath.Base(dir)
	stages := filepath.Dir(dir)
	if filepath.Base(stages) == "stages" && filepath.Base(filepath.Dir(filepath.Dir(stages))) == "runs" {
		name, _, _ := strings.Cut(base, ".")
		return filepath.Base(filepath.Dir(stages)) + "-" + name
	}
	return base
}
