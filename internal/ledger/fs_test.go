package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOSFSSyncDirs: the real filesystem fsyncs several directories at once; a directory
// that cannot be opened fails the call, named.
func TestOSFSSyncDirs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "a", "b")
	if err := os.MkdirAll(b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := (OSFS{}).SyncDirs([]string{b, a, root}); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "missing")
	err := (OSFS{}).SyncDirs([]string{b, missing, a})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("SyncDirs with a missing directory = %v", err)
	}
	var _ dirsSyncer = OSFS{}
}
