package ledger_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
)

// TestTamperMiddleRecord flips every byte of a middle record (envelope, body, trailer and
// newline alike): each must be corruption located at that record, never skipped or repaired.
func TestTamperMiddleRecord(t *testing.T) {
	data, recs := fixture(t, 4)
	target := recs[2] // seq 3
	start := int(target.Offset)
	end := int(recs[3].Offset)
	masks := []byte{0x01, 0x20, 0x80, 0xff}
	if *long {
		masks = masks[:0]
		for m := 1; m < 256; m++ {
			masks = append(masks, byte(m))
		}
	}
	for i := start; i < end; i++ {
		for _, mask := range masks {
			file := bytes.Clone(data)
			file[i] ^= mask
			_, _, _, err := openBytes(file)
			wantCorrupt(t, err, int64(start), 3)
		}
	}
}

// TestTamperLastRecord flips every byte of the last record. A flip that leaves a complete
// record (strict JSON with a well-formed trailer) is corruption; a flip that makes the line
// unparseable or breaks its trailer is indistinguishable from a torn write (LEDGER.md) and is
// repaired with evidence. Open never accepts the altered record.
func TestTamperLastRecord(t *testing.T) {
	data, recs := fixture(t, 4)
	last := recs[len(recs)-1]
	masks := []byte{0x01, 0x20, 0x80}
	if *long {
		masks = masks[:0]
		for m := 1; m < 256; m++ {
			masks = append(masks, byte(m))
		}
	}
	counts := map[string]int{}
	for i := int(last.Offset); i < len(data); i++ {
		for _, mask := range masks {
			file := bytes.Clone(data)
			file[i] ^= mask
			m, l, rep, err := openBytes(file)
			switch {
			case errors.Is(err, ledger.ErrCorrupt):
				wantCorrupt(t, err, last.Offset, last.Seq)
				counts["corrupt"]++
			case err == nil:
				l.Close()
				if rep.Torn == nil {
					t.Fatalf("byte %d ^ %#x: the altered record was accepted", i, mask)
				}
				checkRepaired(t, m, rep, file, last.Seq-1)
				counts["torn"]++
			default:
				t.Fatalf("byte %d ^ %#x: %v", i, mask, err)
			}
		}
	}
	if counts["corrupt"] == 0 {
		t.Fatal("no flip of the last record was corruption")
	}
	t.Logf("last-record flips: %v", counts)
}

func TestTamper(t *testing.T) {
	data, recs := fixture(t, 4)
	ls := lines(data)
	off := func(seq int) int64 { return recs[seq-1].Offset }
	ts := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	craft := func(seq int64, id, parent string, prev string) []byte {
		return ledger.BuildLineForTest(seq, id, parent, "entry", ts, []byte(`{"n":9}`), prev)
	}
	edit := func(line []byte, old, new string) []byte {
		if !bytes.Contains(line, []byte(old)) {
			t.Fatalf("fixture has no %q", old)
		}
		return bytes.Replace(bytes.Clone(line), []byte(old), []byte(new), 1)
	}
	// rehash recomputes a line's h after an edit, as an attacker with file access could.
	rehash := func(line []byte, prev string) []byte { return ledger.RehashForTest(line[:len(line)-73], prev) }
	end := int64(len(data))
	for _, tc := range []struct {
		name     string
		file     []byte
		off, seq int64
	}{
		{"deleted line", join(ls[0], ls[1], ls[3], ls[4]), off(3), 3},
		{"deleted first line", join(ls[1], ls[2], ls[3], ls[4]), 0, 1},
		{"swapped lines", join(ls[0], ls[1], ls[3], ls[2], ls[4]), off(3), 3},
		{"duplicated line", join(ls[0], ls[1], ls[2], ls[2], ls[3], ls[4]), off(4), 4},
		{"duplicated last line", join(data, ls[4]), end, 6},
		{"duplicated header", join(ls[0], ls[0], ls[1]), off(2), 2},
		{"edited body", join(ls[0], ls[1], edit(ls[2], "hello", "jello"), ls[3], ls[4]), off(3), 3},
		{"edited body of the last record", join(ls[0], ls[1], ls[2], ls[3], edit(ls[4], "hello", "jello")), off(5), 5},
		{"edited kind", join(ls[0], ls[1], edit(ls[2], `"entry"`, `"entrx"`), ls[3], ls[4]), off(3), 3},
		{"edited and rehashed", join(ls[0], ls[1], rehash(edit(ls[2], "hello", "jello"), recs[1].H), ls[3], ls[4]), off(4), 4},
		{"gap in seq", join(data, craft(7, "n7", "", recs[4].H)), end, 6},
		{"unknown parentId", join(data, craft(6, "n6", "ghost", recs[4].H)), end, 6},
		{"duplicate id", join(data, craft(6, recs[2].ID, "", recs[4].H)), end, 6},
		{"wrong prev", join(data, craft(6, "n6", "", recs[3].H)), end, 6},
		{"second header", join(data, ledger.BuildLineForTest(6, "h2", "", ledger.KindHeader, ts,
			[]byte(`{"type":"session","id":"h2","format":1}`), recs[4].H)), end, 6},
		{"garbage line in the middle", join(ls[0], ls[1], []byte("hello\n"), ls[2], ls[3], ls[4]), off(3), 3},
		{"zeroed line in the middle", join(ls[0], ls[1], make([]byte, len(ls[2])), ls[3], ls[4]), off(3), 3},
		{"blank line in the middle", join(ls[0], ls[1], []byte("\n"), ls[2], ls[3], ls[4]), off(3), 3},
		{"reordered members", join(ls[0], ls[1], rehash(edit(ls[2], `"id":"r2","parentId":"r1"`, `"parentId":"r1","id":"r2"`), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"extra member", join(ls[0], ls[1], rehash(edit(ls[2], `,"prev":`, `,"extra":1,"prev":`), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"missing member", join(ls[0], ls[1], rehash(edit(ls[2], `"ts":"2026-01-02T03:04:05.003Z",`, ``), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"bad ts", join(ls[0], ls[1], rehash(edit(ls[2], `"ts":"2026-01-02T03:04:05.003Z"`, `"ts":"yesterday"`), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"seq as a string", join(ls[0], ls[1], rehash(edit(ls[2], `"seq":3`, `"seq":"3"`), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"duplicate key", join(ls[0], ls[1], rehash(edit(ls[2], `"n":1,`, `"n":1,"n":2,`), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"invalid UTF-8", join(ls[0], ls[1], rehash(edit(ls[2], "hello", "hel\xfflo"), recs[1].H), ls[3], ls[4]), off(3), 3},
		{"wrong header type", join(rehash(edit(ls[0], `"type":"session"`, `"type":"Session"`), ""), ls[1]), 0, 1},
		{"header with a parent", join(rehash(edit(ls[0], `"parentId":null`, `"parentId":"s1"`), ""), ls[1]), 0, 1},
		{"truncated then more records", join(ls[0], ls[1], ls[2][:40], []byte("\n"), ls[3], ls[4]), off(3), 3},
		{"line over the cap", join(ls[0], bytes.Repeat([]byte("a"), ledger.MaxLineBytes+10), []byte("\n"), ls[1]), off(2), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := openBytes(tc.file)
			wantCorrupt(t, err, tc.off, tc.seq)
			if !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("offset %d (seq %d)", tc.off, tc.seq))) {
				t.Fatalf("message does not name offset and seq: %v", err)
			}
		})
	}
}
