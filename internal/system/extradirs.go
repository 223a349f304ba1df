package system

// extraDir is one permissions.additionalDirectories entry with the file that named it.
type extraDir struct {
	path, file string
	project    bool
}
