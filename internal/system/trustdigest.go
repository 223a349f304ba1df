package system

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/contextpack"
)

// trustEntry is the stored decision about one project. An allow holds the digests of the
// guarded files it was given for (path relative to the project root → digest, see
// [fileDigest]); the project's files load only while they still match. An entry an older
// rein wrote as a bare "allow" or "deny" string reads with legacy set: it knows no digests.
type trustEntry struct {
	Decision TrustDecision     `json:"decision"`
	Files    map[string]string `json:"files,omitempty"`
	legacy   bool
}

// UnmarshalJSON reads the object form and the bare string of older trust.json files.
func (e *trustEntry) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		e.legacy = true
		return json.Unmarshal(b, &e.Decision)
	}
	type plain trustEntry // the keys were checked by strictjson already
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = trustEntry(p)
	return nil
}

// FileState says how a guarded file stands against the digests its project was trusted with.
type FileState string

const (
	FileTrusted FileState = "trusted" // as it was when the project was trusted
	FileChanged FileState = "changed" // edited since
	FileNew     FileState = "new"     // not there, or not approved, when the project was trusted
	FileRemoved FileState = "removed" // there when the project was trusted, gone now
)

// GuardedFile is one file (or skills directory) the trust gate guards.
type GuardedFile struct {
	// Path is relative to the project root when inside it.
	Path  string
	State FileState
}

// guardedFiles returns what the trust gate guards for a run in dir (symlinks resolved) of the
// project root: the files contextpack leaves unread when untrusted (none with a fixed system
// prompt) and the project settings file; absolute paths.
func guardedFiles(home string, global Settings, dir, root string, fixedPrompt bool) []string {
	var untrusted []string
	if !fixedPrompt {
		untrusted = contextpack.Load(contextpack.Inputs{Dir: dir, Home: home, UserHome: userHomeDir(), GateContextFiles: global.gateContextFiles()}).Untrusted
	}
	return guarded(root, home, untrusted)
}

// digestFiles returns the digests of paths (absolute), keyed relative to root. A path that
// cannot be read gets a digest no file has, so it never matches.
func digestFiles(root string, paths []string) map[string]string {
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		d, err := fileDigest(p)
		if err != nil {
			d = "unreadable: " + err.Error()
		}
		out[relKey(root, p)] = d
	}
	return out
}

func relKey(root, p string) string {
	return filepath.ToSlash(shownPaths(root, []string{p})[0])
}

// fileDigest is "sha256:" and the hex SHA-256 of a file's content, or, for a directory (a
// skills tree), of a listing of every entry below it in lexical order: each directory's
// relative path, each file's relative path and content digest, each symbolic link's relative
// path and target (links below the top are not followed).
func fileDigest(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		sum, err := contentDigest(p)
		return "sha256:" + sum, err
	}
	h := sha256.New()
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p, q)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			fmt.Fprintf(h, "d %q\n", rel)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(q)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "l %q %q\n", rel, target)
		case d.Type().IsRegular():
			sum, err := contentDigest(q)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %q %s\n", rel, sum)
		default:
			fmt.Fprintf(h, "o %q %s\n", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return "sha256-tree:" + hex.EncodeToString(h.Sum(nil)), nil
}

func contentDigest(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compareFiles says how each guarded file of a run in dir stands against stored, the digests
// of an allow: current are the digests now (relative keys). A stored file that is gone counts
// as removed when a run in dir would load it (its .rein/, .agents/ or context file's directory
// lies on the way from root to dir), since removing, say, a settings file drops its deny rules.
func compareFiles(root, dir string, stored, current map[string]string) []GuardedFile {
	var out []GuardedFile
	for rel, d := range current {
		st := FileTrusted
		switch old, ok := stored[rel]; {
		case !ok:
			st = FileNew
		case old != d:
			st = FileChanged
		}
		out = append(out, GuardedFile{Path: rel, State: st})
	}
	for rel := range stored {
		if _, ok := current[rel]; ok {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if exists(abs) || !dirHolds(ownerDir(abs), dir) {
			continue
		}
		out = append(out, GuardedFile{Path: rel, State: FileRemoved})
	}
	slices.SortFunc(out, func(a, b GuardedFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// ownerDir is the directory whose runs load the guarded path p: the parent of its .rein or
// .agents directory, or a context file's own directory.
func ownerDir(p string) string {
	d := filepath.Dir(p)
	if b := filepath.Base(d); b == ".rein" || b == ".agents" {
		return filepath.Dir(d)
	}
	return d
}

// dirHolds reports whether p is dir or lies below it.
func dirHolds(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// unapproved returns the files of fs that are not as trusted.
func unapproved(files []GuardedFile) []GuardedFile {
	var out []GuardedFile
	for _, f := range files {
		if f.State != FileTrusted {
			out = append(out, f)
		}
	}
	return out
}

// describeChanges names each unapproved file with its state: "changed .rein/settings.json".
func describeChanges(files []GuardedFile) string {
	parts := make([]string, 0, len(files))
	for _, f := range files {
		parts = append(parts, string(f.State)+" "+f.Path)
	}
	return listShort(parts)
}
