package system

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/filelock"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/strictjson"
)

// TrustFile is the name of the file under $REIN_HOME holding project trust decisions.
const TrustFile = "trust.json"

// ErrTrustRequired says a project holds rein resources, has no trust decision, and the run
// cannot ask (it is not interactive). The CLI maps it to the "blocked by policy" exit code.
var ErrTrustRequired = errors.New("the project needs a trust decision")

// TrustDecision is a stored decision about one project.
type TrustDecision string

const (
	TrustAllow TrustDecision = "allow"
	TrustDeny  TrustDecision = "deny"
)

// TrustChoice is a run's own say about trust (--trust, --no-trust).
type TrustChoice int

const (
	TrustFromSettings TrustChoice = iota // the stored decision, then trust.mode
	TrustOnce                            // --trust: trust the project for this run
	TrustNotOnce                         // --no-trust: do not trust it for this run
)

// trustFile is the format of trust.json: project directory → decision.
type trustFile struct {
	Projects map[string]trustEntry `json:"projects"`
}

// ProjectDir returns the project directory trust decisions are keyed by for a run in dir: the
// repository root (the nearest directory holding .git), else dir; absolute, symlinks resolved.
func ProjectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return contextpack.ProjectRoot(real), nil
}

// absReal returns dir absolute with symlinks resolved.
func absReal(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return abs, nil
}

// readTrust reads trust.json; a missing file holds no decisions. A file that group or others
// may write is refused: whoever can write it decides what rein loads.
func readTrust(home string) (trustFile, error) {
	path := filepath.Join(home, TrustFile)
	tf := trustFile{Projects: map[string]trustEntry{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tf, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return tf, fmt.Errorf("%w: %s has mode %04o, writable by others; run: chmod 600 %s", ErrConfig, path, st.Mode().Perm(), path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return tf, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := strictjson.Unmarshal(data, &tf); err != nil {
		return tf, fmt.Errorf("%w: %s is not valid: %w (expected {\"projects\": {\"/path/to/project\": {\"decision\": \"allow\", \"files\": {…}}}}; fix it or remove it)", ErrConfig, path, err)
	}
	if tf.Projects == nil {
		tf.Projects = map[string]trustEntry{}
	}
	for p, e := range tf.Projects {
		if e.Decision != TrustAllow && e.Decision != TrustDeny {
			return tf, fmt.Errorf("%w: %s: projects[%q]: %q is not a decision; use \"allow\" or \"deny\"", ErrConfig, path, p, e.Decision)
		}
	}
	return tf, nil
}

// StoredTrust returns the decision stored for the project directory root ("" for none).
func StoredTrust(home, root string) (TrustDecision, error) {
	e, err := storedEntry(home, root)
	return e.Decision, err
}

func storedEntry(home, root string) (trustEntry, error) {
	tf, err := readTrust(home)
	if err != nil {
		return trustEntry{}, err
	}
	return tf.Projects[root], nil
}

// SetTrust stores (or with "" removes) the decision for the project of dir (see ProjectDir)
// in $REIN_HOME/trust.json, written atomically with mode 0600 under a lock. An allow records
// the digests of the files the gate guards for a run in dir, keeping those of files a run
// elsewhere in the project loads that are still there; a later run loads the project's files
// only while they match.
func SetTrust(home, dir string, d TrustDecision) error {
	if d != "" && d != TrustAllow && d != TrustDeny {
		return fmt.Errorf("system: unknown trust decision %q", d)
	}
	root, err := ProjectDir(dir)
	if err != nil {
		return err
	}
	real, err := absReal(dir)
	if err != nil {
		return err
	}
	var files map[string]string
	if d == TrustAllow {
		global, err := ReadSettings(filepath.Join(home, SettingsFile), true)
		if err != nil {
			return err
		}
		files = digestFiles(root, guardedFiles(home, global, real, root, false))
	}
	return storeTrust(home, root, trustEntry{Decision: d, Files: files})
}

// storeTrust writes e (a Decision "" removes the entry) for root. An allow keeps the digests
// of the previous allow for files e does not name that are still there.
func storeTrust(home, root string, e trustEntry) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	lock, err := filelock.Hold(filepath.Join(home, TrustFile+".lock"))
	if err != nil {
		return err
	}
	defer lock.Close()
	tf, err := readTrust(home)
	if err != nil {
		return err
	}
	if old := tf.Projects[root]; e.Decision == TrustAllow && old.Decision == TrustAllow {
		for rel, sum := range old.Files {
			if _, ok := e.Files[rel]; !ok && exists(filepath.Join(root, filepath.FromSlash(rel))) {
				if e.Files == nil {
					e.Files = map[string]string{}
				}
				e.Files[rel] = sum
			}
		}
	}
	if e.Decision == "" {
		delete(tf.Projects, root)
	} else {
		tf.Projects[root] = e
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(home, TrustFile), append(data, '\n'), 0o600)
}

// TrustStatus says how a project stands with the trust gate.
type TrustStatus struct {
	Root string
	// Stored is the decision in trust.json, "" when none.
	Stored TrustDecision
	// Legacy: the stored allow was written by an older rein and records no digests, so every
	// guarded file counts as new until the project is trusted again.
	Legacy bool
	// Mode is the trust.mode setting that applies without a stored decision.
	Mode string
	// Resources are the project's files the gate guards, relative to Root; none means the
	// project needs no decision.
	Resources []string
	// Files are the guarded files with their state against a stored allow (every one new
	// without one), and those removed since; sorted by path.
	Files []GuardedFile
}

// Trust reports how the project of dir stands with the trust gate; Resources are those a run
// in dir would load.
func Trust(home, dir string) (*TrustStatus, error) {
	root, err := ProjectDir(dir)
	if err != nil {
		return nil, err
	}
	global, err := ReadSettings(filepath.Join(home, SettingsFile), true)
	if err != nil {
		return nil, err
	}
	stored, err := storedEntry(home, root)
	if err != nil {
		return nil, err
	}
	real, err := absReal(dir)
	if err != nil {
		return nil, err
	}
	paths := guardedFiles(home, global, real, root, false)
	var allowed map[string]string
	if stored.Decision == TrustAllow {
		allowed = stored.Files
	}
	return &TrustStatus{Root: root, Stored: stored.Decision, Legacy: stored.legacy && stored.Decision == TrustAllow, Mode: global.mode(),
		Resources: shownPaths(root, paths), Files: compareFiles(root, real, allowed, digestFiles(root, paths))}, nil
}

// guarded returns what the trust gate keeps out of an untrusted run: the files contextpack
// left unread, and the project settings file.
func guarded(root, home string, untrusted []string) []string {
	out := append([]string(nil), untrusted...)
	if p := projectSettingsPath(root); exists(p) && !sameFile(filepath.Dir(p), home) {
		out = append(out, p)
	}
	for _, p := range claudeProjectSettingsPaths(root) {
		if exists(p) {
			out = append(out, p)
		}
	}
	if p := filepath.Join(root, mcp.ProjectFile); exists(p) {
		out = append(out, p)
	}
	return out
}

// shownPaths shows paths relative to root when inside it.
func shownPaths(root string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			p = r
		}
		out = append(out, p)
	}
	return out
}

// projectTrust is the outcome of the trust gate for one run.
type projectTrust struct {
	root    string
	trusted bool
	// why says what decided, for notices: "--no-trust", "trust.json", "trust.mode never"…
	why string
	// undecided: the gate had no decision and asked nobody (rein context).
	undecided bool
	// changed are the guarded files that differ from what a stored allow was given for; the
	// allow does not hold until they are approved.
	changed []GuardedFile
}

// decideTrust applies the run's choice, then the stored decision, then the mode. ok is false
// when the mode is "ask" and nothing decided yet. A stored allow decides only while the files
// the gate guards for a run in dir (paths: see guardedFiles) are those it was given for;
// otherwise pt.changed names the difference and the mode decides.
func decideTrust(o Options, global Settings, dir, root string, paths []string) (projectTrust, bool, error) {
	pt := projectTrust{root: root}
	switch o.Trust {
	case TrustOnce:
		pt.trusted, pt.why = true, "--trust"
		return pt, true, nil
	case TrustNotOnce:
		pt.why = "--no-trust was given"
		return pt, true, nil
	}
	stored, err := storedEntry(o.Home, root)
	if err != nil {
		return pt, false, err
	}
	switch stored.Decision {
	case TrustAllow:
		pt.changed = unapproved(compareFiles(root, dir, stored.Files, digestFiles(root, paths)))
		if len(pt.changed) == 0 {
			pt.trusted, pt.why = true, "trust.json"
			return pt, true, nil
		}
	case TrustDeny:
		pt.why = "it is denied in $REIN_HOME/" + TrustFile
		return pt, true, nil
	}
	switch global.mode() {
	case TrustModeAlways:
		pt.trusted, pt.why = true, "trust.mode always"
		return pt, true, nil
	case TrustModeNever:
		pt.why = "trust.mode is never"
		if len(pt.changed) > 0 {
			pt.why = "its files changed since it was trusted, and trust.mode is never"
		}
		return pt, true, nil
	}
	return pt, false, nil
}

// trustQuestion is what an interactive run asks about an undecided project, or one whose
// files changed since it was trusted.
func trustQuestion(pt projectTrust, resources []string) string {
	if len(pt.changed) > 0 {
		return fmt.Sprintf("rein: the project %s was trusted, but files that configure or extend rein are not as they were then (%s).\nTrust the project as it is now and load them? The answer \"y\" is remembered in $REIN_HOME/%s [y/N] ",
			pt.root, describeChanges(pt.changed), TrustFile)
	}
	return fmt.Sprintf("rein: the project %s holds files that configure or extend rein (%s).\nTrust this project and load them? The answer \"y\" is remembered in $REIN_HOME/%s [y/N] ",
		pt.root, listShort(resources), TrustFile)
}

// untrustedNotice is the one line saying what an untrusted run ignored.
func untrustedNotice(pt projectTrust, resources []string) string {
	if pt.undecided && len(pt.changed) > 0 {
		return fmt.Sprintf("project %s is not trusted as it is now (%s since it was trusted): ignoring %s (a run would ask; a non-interactive run refuses); review them, then `rein trust --allow`, or pass --trust for one run",
			pt.root, describeChanges(pt.changed), listShort(resources))
	}
	if pt.undecided {
		return fmt.Sprintf("project %s is not trusted yet: ignoring %s (a run would ask; a non-interactive run refuses); trust it with `rein trust --allow`, or pass --trust for one run",
			pt.root, listShort(resources))
	}
	return fmt.Sprintf("project %s is not trusted (%s): ignoring %s; trust it with `rein trust --allow`, or pass --trust for one run",
		pt.root, pt.why, listShort(resources))
}

// trustRequired is the error of a non-interactive run in an undecided project, or in one
// whose files changed since it was trusted.
func trustRequired(pt projectTrust, resources []string) error {
	if len(pt.changed) > 0 {
		return fmt.Errorf("%w: the project %s was trusted, but files that configure or extend rein are not as they were then (%s), and this run is not interactive, so it cannot ask: review them (`rein trust --show` lists them), then trust them as they are with `rein trust --allow`, pass --trust for this run, or --no-trust to run without them",
			ErrTrustRequired, pt.root, describeChanges(pt.changed))
	}
	return fmt.Errorf("%w: the project %s holds files that configure or extend rein (%s) and has no trust decision, and this run is not interactive, so it cannot ask: trust it with `rein trust --allow` (remembered), pass --trust to trust it for this run, or --no-trust to run without them",
		ErrTrustRequired, pt.root, listShort(resources))
}

func listShort(paths []string) string {
	const max = 4
	s := append([]string(nil), paths...)
	sort.Strings(s)
	if len(s) > max {
		return strings.Join(s[:max], ", ") + fmt.Sprintf(" and %d more", len(s)-max)
	}
	return strings.Join(s, ", ")
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
