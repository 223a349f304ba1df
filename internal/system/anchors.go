package system

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/strictjson"
)

// Session anchors. A ledger verifies its own chain, but a ledger that lost its last records
// whole — replaced by an older copy of itself — is a valid, shorter ledger. So the head of every
// session (seq and hash) is kept outside it, in $REIN_HOME/anchors/<digest of the session's
// directory>.json: one file per session, written atomically (mode 0600) by the session's single
// writer each time one of its runs ends and when it is closed. Not when it is created: a new
// session is not durable before its first intent, and any copy of it holds its header, so an
// anchor at the header would detect no rollback (a ledger of another session is refused by the
// header's id) and would cost an fsync before the first model request. It is outside the
// session's directory, so copying an older ledger — or a whole older session directory — over
// the current one leaves it in place; opening the session checks its ledger against it.

// ErrSessionGone: the session's ledger file was removed or replaced while the session was
// open: what the run recorded went to a file nobody will read again.
var ErrSessionGone = errors.New("session ledger removed or replaced during the run")

// AnchorsDir holds the anchors of every session: $REIN_HOME/anchors.
func AnchorsDir(home string) string { return filepath.Join(home, "anchors") }

// anchor is an anchor file's content.
type anchor struct {
	V    int    `json:"v"`
	Dir  string `json:"dir"`
	ID   string `json:"id"`
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// anchorPath is the anchor file of the session in dir.
func anchorPath(home, dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(AnchorsDir(home), hex.EncodeToString(sum[:16])+".json")
}

// readAnchor reads the anchor of the session in dir; nil when it has none.
func readAnchor(home, dir string) (*anchor, string, error) {
	p := anchorPath(home, dir)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, p, nil
	}
	if err != nil {
		return nil, p, fmt.Errorf("session anchor %s: %w", p, err)
	}
	var a anchor
	if err := strictjson.Unmarshal(data, &a); err != nil || a.V != 1 {
		if err == nil {
			err = fmt.Errorf("version %d", a.V)
		}
		return nil, p, fmt.Errorf("%w: the anchor %s of the session in %s does not parse: %w (remove it to accept the ledger as it is)", ledger.ErrCorrupt, p, dir, err)
	}
	return &a, p, nil
}

// writeAnchor records (seq, hash) as the head of session id in dir.
func writeAnchor(home, dir, id string, seq int64, hash string) error {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(AnchorsDir(home), 0o700); err != nil {
		return fmt.Errorf("session anchor: %w", err)
	}
	data, err := json.Marshal(anchor{V: 1, Dir: dir, ID: id, Seq: seq, Hash: hash})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(anchorPath(home, dir), data, 0o600); err != nil {
		return fmt.Errorf("session anchor of %s: %w", id, err)
	}
	return nil
}

// AnchoredLedger is what checking an anchor reads of a session's ledger.
type AnchoredLedger interface {
	CheckAnchor(seq int64, h string) error
	Head() (int64, string)
}

// CheckAnchor checks the ledger of session id in dir against its anchor, if it has one: a
// ledger that no longer holds the anchored head (an older copy of itself) fails with an error
// wrapping ledger.ErrRollback that names both heads. It only reads.
func CheckAnchor(home, dir, id string, l AnchoredLedger) error {
	a, p, err := readAnchor(home, dir)
	if err != nil || a == nil {
		return err
	}
	seq, hash := l.Head()
	if a.ID != id {
		return fmt.Errorf("%w: session %s: the anchor %s names session %s: the ledger in %s was replaced (restore it, or remove the anchor file to accept it)",
			ledger.ErrRollback, id, p, a.ID, dir)
	}
	if err := l.CheckAnchor(a.Seq, a.Hash); err != nil {
		return fmt.Errorf("session %s was rolled back: when its last run ended its ledger's head was seq %d hash %s (anchor %s), but the ledger in %s now ends at seq %d hash %s — an older copy of it; restore the newer ledger, or remove the anchor file to accept this one: %w",
			id, a.Seq, a.Hash, p, dir, seq, hash, err)
	}
	return nil
}

// ledgerFile is the identity of an open session's ledger file, to tell when it was removed or
// replaced under the open session.
type ledgerFile struct {
	path string
	info os.FileInfo
}

// statLedger records the identity of the ledger file in dir.
func statLedger(dir string) (*ledgerFile, error) {
	p := filepath.Join(dir, ledger.FileName)
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("session ledger %s: %w", p, err)
	}
	return &ledgerFile{path: p, info: info}, nil
}

// check fails with ErrSessionGone when the path no longer names the file that was opened.
func (f *ledgerFile) check(id string) error {
	info, err := os.Stat(f.path)
	switch {
	case err != nil:
		return fmt.Errorf("%w: session %s: its ledger %s is gone (%w); what this run recorded is lost, and the run failed", ErrSessionGone, id, f.path, err)
	case !os.SameFile(info, f.info):
		return fmt.Errorf("%w: session %s: its ledger %s was replaced by another file; what this run recorded went to the removed one, and the run failed", ErrSessionGone, id, f.path)
	}
	return nil
}

// sessionGuard keeps an open session honest about where it lives: the anchor it checked on
// open and advances at each run end, and the identity of its ledger file.
type sessionGuard struct {
	home, dir, id string
	file          *ledgerFile
}

// guardSession starts guarding the open session s: an existing session (created false) is
// first checked against its anchor; a created one is anchored at its first run's end.
func guardSession(home string, s anchoredSession, created bool) (*sessionGuard, error) {
	g := &sessionGuard{home: home, dir: s.Dir(), id: s.ID()}
	if !created {
		if err := CheckAnchor(home, g.dir, g.id, s); err != nil {
			return nil, err
		}
	}
	f, err := statLedger(g.dir)
	if err != nil {
		return nil, err
	}
	g.file = f
	return g, nil
}

// anchoredSession is what the guard reads of a session.
type anchoredSession interface {
	AnchoredLedger
	Dir() string
	ID() string
}

// check fails with ErrSessionGone when the session's ledger file was removed or replaced.
func (g *sessionGuard) check() error { return g.file.check(g.id) }

// anchor records the session's head, unless its ledger file is gone.
func (g *sessionGuard) anchor(s AnchoredLedger) error {
	if err := g.check(); err != nil {
		return err
	}
	seq, hash := s.Head()
	return writeAnchor(g.home, g.dir, g.id, seq, hash)
}

// forget removes the anchor of a session that is removed again.
func (g *sessionGuard) forget() { _ = os.Remove(anchorPath(g.home, g.dir)) }
