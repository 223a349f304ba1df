package run

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/gitx"
)

// SkillTreeDigest is the digest of the directory tree at dir (see the package doc).
func SkillTreeDigest(dir string) (artifact.Digest, error) {
	t, err := readSkillTree(dir)
	return t.Digest, err
}

// FileDigest is the sha256 of a file's bytes, read in a stream.
func FileDigest(path string) (artifact.Digest, error) { return artifact.SumFile(path) }

// ProjectRoot returns the top of the git work tree holding dir, or dir itself (absolute).
func ProjectRoot(dir string) (string, error) {
	if top, err := (gitx.Runner{Dir: dir}).TopLevel(context.Background()); err == nil && top != "" {
		return top, nil
	}
	return filepath.Abs(dir)
}

// summary returns the requirement's first heading, else its first non-empty line, cut at 120
// bytes on a rune boundary.
func summary(text []byte) string {
	first := ""
	for _, l := range strings.Split(string(text), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l == "---" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			first = strings.TrimSpace(strings.TrimLeft(l, "#"))
			break
		}
		if first == "" {
			first = l
		}
	}
	if len(first) > 120 {
		cut := 120
		for cut > 0 && !isRuneStart(first[cut]) {
			cut--
		}
		first = first[:cut]
	}
	return first
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func itoa(n int) string { return strconv.Itoa(n) }
