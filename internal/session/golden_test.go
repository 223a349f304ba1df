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
)

// goldenDigests are the sha256 of the committed golden ledgers. -update does not change them:
// a format change (a renamed tag in llm or session, a new field) is made on purpose, here and
// in the golden files, and comes with a FormatVersion bump unless old files read the same.
var goldenDigests = map[string]string{
	"conversation": "c33914219a3dc6c1f29e02d94d522899f8f88366ec0fa5add2bc359de811787a",
	"recovery":     "b50a1ddfba0dd62f3b879dd0033a3d3b0fd0d1059f81843b1b9e150529060142",
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
