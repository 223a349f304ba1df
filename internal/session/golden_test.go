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
	"conversation": "a5d6babaaa0f16de3bf7fa1824357818a8c38be92c6d1c96903df43c9db234bc",
	"recovery":     "86b0e75a10e29550372c976771d3a582dc81c34d2fa58697bca681bef87cd506",
	"fork":         "f176784dc5187e0dc0ddd38fdd4b861ad4d95951903d6167f95ecd0463a99d5a",
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
// intent's fsync (every record a version 1 line, testdata/golden/v1) read exactly as the
// current ones, which hold version 2 lines (records written while earlier ones were not yet
// durable declare it): the ledger change is in the envelope only, the session's records are the
// same.
func TestGoldenV1FilesReadTheSame(t *testing.T) {
	for _, name := range []string{"conversation", "recovery"} {
		t.Run(name, func(t *testing.T) {
			v1, v1audit := readGolden(t, "v1/"+name)
			now, nowAudit := readGolden(t, name)
			if diff := cmp.Diff(v1, now); diff != "" {
				t.Errorf("state (-v1 +now):\n%s", diff)
			}
			if diff := cmp.Diff(v1audit, nowAudit); diff != "" {
				t.Errorf("audit records (-v1 +now):\n%s", diff)
			}
		})
	}
}
