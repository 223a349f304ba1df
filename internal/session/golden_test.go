package session_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goldenDigests are the sha256 of the committed golden ledgers. -update does not change them:
// a format change (a renamed tag in llm or session, a new field) is made on purpose, here and
// in the golden files, and comes with a FormatVersion bump unless old files read the same.
var goldenDigests = map[string]string{
	"conversation": "9da31963ad49337c4b9fe93720cbeaa7b1decfb519a3547979d41a776770810c",
	"recovery":     "e73221ce42901def37f4c68313cfca574c9cc00e8c903c89e3639f87d00ee98c",
	"fork":         "93237878f82c41c75cfef6dbde48f07beedd2f565f71a87b464b2d96be32899a",
}

// TestGoldenFilesAreWhatTheWriterWrites: the generator (a session built through the public API
// with a fixed clock and fixed ids) writes exactly the committed golden ledgers, byte for byte.
// go test ./internal/session -run Golden -update rewrites them: a change there is a change of
// the on-disk format (bump FormatVersion unless old files still read the same).
func TestGoldenFilesAreWhatTheWriterWrites(t *testing.T) {
	for _, sc := range goldenScenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), sc.name)
			sc.write(t, dir)
			got, err := os.ReadFile(filepath.Join(dir, "ledger.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "golden", sc.name+".jsonl")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if sum := sha256.Sum256(want); hex.EncodeToString(sum[:]) != goldenDigests[sc.name] {
				t.Errorf("%s has sha256 %x, not the pinned %s: the on-disk format changed (if that is meant, bump session.FormatVersion unless old files read the same, and update goldenDigests)",
					file, sum, goldenDigests[sc.name])
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the session writes now (run with -update if the change is meant, and bump session.FormatVersion if old files no longer read the same):\n%s",
					file, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff names the first differing line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant %s\n got %s", i+1, wl, gl)
		}
	}
	return ""
}

// TestGoldenV1FilesReadTheSame: the golden ledgers as written before results rode on the next
// intent's fsync (every record a version 1 line, testdata/golden/v1), and as written before a
// new session's header rode on its first intent's fsync (testdata/golden/v2: version 2 lines
// from synced 1 on), read exactly as the current ones, whose records before the first fsync
// are version 3 lines with synced 0: the ledger changes are in the envelope only, the session's
// records are the same.
func TestGoldenV1FilesReadTheSame(t *testing.T) {
	for _, old := range []struct{ dir, name string }{{"v1", "conversation"}, {"v1", "recovery"},
		{"v2", "conversation"}, {"v2", "recovery"}, {"v2", "fork"}} {
		t.Run(old.dir+"/"+old.name, func(t *testing.T) {
			was, wasAudit := readGolden(t, old.dir+"/"+old.name)
			now, nowAudit := readGolden(t, old.name)
			if diff := cmp.Diff(was, now); diff != "" {
				t.Errorf("state (-old +now):\n%s", diff)
			}
			if diff := cmp.Diff(wasAudit, nowAudit); diff != "" {
				t.Errorf("audit records (-old +now):\n%s", diff)
			}
		})
	}
}
