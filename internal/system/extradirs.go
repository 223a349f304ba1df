package system

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// extraDir is one permissions.additionalDirectories entry with the file that named it.
type extraDir struct {
	path, file string
	project    bool
}

// AdditionalDir is a directory outside the workspace the file tools may read and write
// (permissions.additionalDirectories), with the settings file that named it.
type AdditionalDir struct {
	Path string `json:"path"`
	From string `json:"from"`
}

// additionalDirs resolves the additional directories of s: "~/" is the user's home, a
// relative path is taken from the project root (root) for a project's file and from the
// working directory (cwd) for the user's; symbolic links are resolved. One that is not an
// existing directory, or lies in the workspace already, is a warning and left out.
func additionalDirs(s Settings, root, cwd string) ([]AdditionalDir, []string) {
	var out []AdditionalDir
	var warnings []string
	seen := map[string]bool{}
	for _, d := range s.extraDirs {
		p := d.path
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			home := userHomeDir()
			if home == "" {
				warnings = append(warnings, fmt.Sprintf("%s: permissions.additionalDirectories: %q: no home directory is known; ignored", d.file, p))
				continue
			}
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		case !filepath.IsAbs(p) && d.project:
			p = filepath.Join(root, p)
		case !filepath.IsAbs(p):
			p = filepath.Join(cwd, p)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
				err = fmt.Errorf("not a directory")
			}
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: permissions.additionalDirectories: %s: %v; ignored", d.file, p, err))
			continue
		}
		if dirHolds(cwd, real) || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, AdditionalDir{Path: real, From: d.file})
	}
	return out, warnings
}
