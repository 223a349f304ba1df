package ledger

import (
	"encoding/hex"
	"time"
)

// BuildLineForTest renders a record exactly as Append would, for crafting tamper fixtures.
func BuildLineForTest(seq int64, id, parent, kind string, ts time.Time, body []byte, prev string) []byte {
	line, _ := buildLine(1, seq, 0, id, parent, kind, ts, body, prev)
	return line
}

// BuildLineVersionForTest is BuildLineForTest with another format version.
func BuildLineVersionForTest(v int, seq int64, id, parent, kind string, ts time.Time, body []byte, prev string) []byte {
	line, _ := buildLine(v, seq, 0, id, parent, kind, ts, body, prev)
	return line
}

// BuildSyncedLineForTest renders a version 2 record carrying synced.
func BuildSyncedLineForTest(seq, synced int64, id, parent, kind string, ts time.Time, body []byte, prev string) []byte {
	line, _ := buildLine(2, seq, synced, id, parent, kind, ts, body, prev)
	return line
}

// BuildSyncedLineVersionForTest is BuildSyncedLineForTest with another format version.
func BuildSyncedLineVersionForTest(v int, seq, synced int64, id, parent, kind string, ts time.Time, body []byte, prev string) []byte {
	line, _ := buildLine(v, seq, synced, id, parent, kind, ts, body, prev)
	return line
}

// RehashForTest completes a line head (a line without its trailer) with the h that chains it
// to prev, as someone with write access to the file could.
func RehashForTest(head []byte, prev string) []byte {
	sum := chainHash(prev, head)
	line := append([]byte{}, head...)
	line = append(line, `,"h":"`...)
	line = hex.AppendEncode(line, sum[:])
	return append(line, "\"}\n"...)
}
