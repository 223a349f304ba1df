package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// fuzzPrefix is a valid two-record ledger the fuzzed bytes are appended to.
func fuzzPrefix() ([]byte, string) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h1, s1 := buildLine(1, 1, 0, "L1", "", KindHeader, ts, []byte(`{"type":"session","id":"L1","format":1}`), "")
	l2, s2 := buildLine(1, 2, 0, "e2", "L1", "entry", ts, []byte(`{"text":"hi"}`), hex.EncodeToString(s1[:]))
	return append(h1, l2...), hex.EncodeToString(s2[:])
}

// FuzzVerifyLine feeds arbitrary bytes to the line verifier, alone and as the tail of a valid
// ledger, and checks that verification never panics and classifies consistently: the valid
// prefix is always kept, a torn tail holds no complete record its writer wrote after the damaged
// one was durable, and corruption is located after
// the prefix.
func FuzzVerifyLine(f *testing.F) {
	prefix, prevH := fuzzPrefix()
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	valid, _ := buildLine(1, 3, 0, "e3", "e2", "intent", ts, []byte(`{"tool":"read","args":{"path":"a.go"},"n":[1,2.5,null,true]}`), prevH)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:len(valid)/2])
	f.Add(append(bytes.Clone(valid), valid...))
	f.Add(append(bytes.Clone(valid[:40]), make([]byte, 64)...))
	f.Add([]byte("garbage\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"v":2,"seq":3}` + "\n"))
	f.Add(bytes.Replace(valid, []byte(`"a.go"`), []byte(`"b.go"`), 1))
	f.Add(bytes.Replace(valid, []byte(`"tool"`), []byte(`"tool","tool":1,"x"`), 1))
	f.Add(bytes.Replace(valid, []byte(`a.go`), []byte("a\xffgo"), 1))
	f.Add([]byte(prefix)) // a duplicated prefix
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, le := parseLine(bytes.TrimSuffix(data, []byte("\n"))); le == nil {
			if !json.Valid(r.Body) || !ValidID(r.ID) || !ValidKind(r.Kind) || len(r.H) != 64 {
				t.Fatalf("parseLine accepted an invalid record: %+v", r)
			}
		}
		file := append(bytes.Clone(prefix), data...)
		c := newChain()
		var seen int64
		res, err := scan("fuzz", bytes.NewReader(file), c, func(r Record) error {
			seen++
			if r.Seq != seen {
				t.Fatalf("record %d has seq %d", seen, r.Seq)
			}
			return nil
		})
		if seen < 2 || res.end < int64(len(prefix)) {
			t.Fatalf("the valid prefix was not kept: %d records, end %d, err %v", seen, res.end, err)
		}
		var ce *CorruptError
		switch {
		case err == nil && res.torn == nil:
			if res.end != int64(len(file)) {
				t.Fatalf("intact, but end %d of %d", res.end, len(file))
			}
		case err == nil:
			if res.torn.Offset != res.end || res.torn.Bytes != int64(len(file))-res.end {
				t.Fatalf("torn tail %+v inconsistent with end %d of %d", res.torn, res.end, len(file))
			}
			for _, seg := range bytes.SplitAfter(file[res.end:], []byte("\n")) {
				if bytes.HasSuffix(seg, []byte("\n")) && durableRecordIn(seg[:len(seg)-1], seen+1) >= 0 {
					t.Fatalf("torn tail contains a complete record written after seq %d was durable: %q", seen+1, seg)
				}
			}
		case errors.As(err, &ce):
			if ce.Offset != res.end || ce.Seq != seen+1 {
				t.Fatalf("corruption at offset %d seq %d, but the prefix ends at %d after seq %d", ce.Offset, ce.Seq, res.end, seen)
			}
		case errors.Is(err, ErrUnsupportedVersion):
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	})
}
