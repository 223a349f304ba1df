package sandbox

import (
	"io"
	"io/fs"
	"os"
)

// placeholderMode is the mode of a placeholder directory: read and search for its owner only,
// a mode no tool gives a directory of its own, so a placeholder is recognised as one.
const placeholderMode fs.FileMode = 0o500

// isPlaceholder reports whether fi, found at path, is a placeholder: an empty directory with
// exactly placeholderMode.
func isPlaceholder(path string, fi fs.FileInfo) bool {
	if !fi.IsDir() || fi.Mode()&fs.ModeType != fs.ModeDir || fi.Mode().Perm() != placeholderMode {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err == io.EOF
}
