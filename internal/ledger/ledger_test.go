package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

func TestCreateAppendReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "s1") // parents are created
	h := ledger.Header{Type: ledger.TypeRun, ID: "run-1", Bindings: map[string]string{"lock": "sha256:abc"}}
	l, err := ledger.Create(dir, h, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	intent, err := l.Append(ledger.Entry{Kind: "intent", ID: "tool-7", Parent: "run-1", Body: map[string]string{"tool": "read"}})
	if err != nil {
		t.Fatal(err)
	}
	usage, err := l.Append(ledger.Entry{Kind: "x-usage", Body: json.RawMessage(` { "tokens" : 12 } `), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	result, err := l.Append(ledger.Entry{Kind: "result", Parent: "tool-7", Body: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if intent.Seq != 2 || usage.Seq != 3 || result.Seq != 4 || result.Prev != usage.H || usage.Prev != intent.H {
		t.Fatalf("chain: %+v %+v %+v", intent, usage, result)
	}
	if string(usage.Body) != `{"tokens":12}` {
		t.Fatalf("raw body not compacted: %s", usage.Body)
	}
	if usage.ID == "" || !ledger.ValidID(usage.ID) {
		t.Fatalf("generated id %q", usage.ID)
	}
	seq, hh := l.Head()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ledger.Entry{Kind: "entry"}); !errors.Is(err, ledger.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}

	l, rep, err := ledger.Open(dir, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if rep.HeadSeq != seq || rep.HeadHash != hh || rep.Torn != nil || len(rep.Warnings) != 0 {
		t.Fatalf("report %+v, want head %d %s", rep, seq, hh)
	}
	h.Format = 1
	if diff := cmp.Diff(h, rep.Header); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	var got []ledger.Record
	for r, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 4 || got[1].ID != "tool-7" || got[1].ParentID != "run-1" || got[3].ParentID != "tool-7" ||
		got[2].ParentID != "" || got[2].Kind != "x-usage" || string(got[3].Body) != `"ok"` {
		t.Fatalf("records: %+v", got)
	}
	if diff := cmp.Diff(result, got[3]); diff != "" {
		t.Fatalf("reread record differs (-appended +read):\n%s", diff)
	}
	if err := l.CheckAnchor(2, intent.H); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckAnchor(2, usage.H); !errors.Is(err, ledger.ErrRollback) {
		t.Fatalf("wrong hash: %v", err)
	}
	if err := l.CheckAnchor(9, usage.H); !errors.Is(err, ledger.ErrRollback) {
		t.Fatalf("missing seq: %v", err)
	}
	r5, err := l.Append(ledger.Entry{Kind: "entry", Parent: "tool-7", Body: nil})
	if err != nil || r5.Seq != 5 || r5.Prev != hh || string(r5.Body) != "null" {
		t.Fatalf("append after reopen: %+v %v", r5, err)
	}
}

func TestAppendRefusals(t *testing.T) {
	m := ledgertest.NewMemFS()
	l, err := ledger.Create(memDir, header(), testOptions(m, "r"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(ledger.Entry{Kind: "a", ID: "x1"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    ledger.Entry
		want error
	}{
		{"reserved header", ledger.Entry{Kind: ledger.KindHeader}, nil},
		{"reserved recovery", ledger.Entry{Kind: ledger.KindRecovery}, nil},
		{"bad kind", ledger.Entry{Kind: "Intent"}, nil},
		{"empty kind", ledger.Entry{}, nil},
		{"bad id", ledger.Entry{Kind: "a", ID: "a b"}, nil},
		{"id with @", ledger.Entry{Kind: "a", ID: "a@b"}, nil},
		{"duplicate id", ledger.Entry{Kind: "a", ID: "x1"}, ledger.ErrDuplicateID},
		{"header id", ledger.Entry{Kind: "a", ID: "s1"}, ledger.ErrDuplicateID},
		{"unknown parent", ledger.Entry{Kind: "a", Parent: "nope"}, ledger.ErrUnknownParent},
		{"duplicate keys", ledger.Entry{Kind: "a", Body: json.RawMessage(`{"a":1,"a":2}`)}, nil},
		{"invalid raw", ledger.Entry{Kind: "a", Body: json.RawMessage(`{`)}, nil},
		{"unencodable", ledger.Entry{Kind: "a", Body: func() {}}, nil},
	} {
		_, err := l.Append(tc.e)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want an error (%v)", tc.name, err, tc.want)
		}
		if errors.Is(err, ledger.ErrFaulted) {
			t.Errorf("%s: refused input faulted the ledger: %v", tc.name, err)
		}
	}
	if r, err := l.Append(ledger.Entry{Kind: "a"}); err != nil || r.Seq != 3 {
		t.Fatalf("refusals changed the ledger: %+v %v", r, err)
	}
}

// TestLineFormat pins the on-disk bytes and recomputes the chain independently of the package.
func TestLineFormat(t *testing.T) {
	data, recs := fixture(t, 1)
	ls := lines(data)
	wantHeader := `{"v":1,"seq":1,"id":"s1","parentId":null,"kind":"header","ts":"2026-01-02T03:04:05.001Z","body":{"type":"session","id":"s1","format":1},"prev":"","h":"`
	if !strings.HasPrefix(string(ls[0]), wantHeader) {
		t.Fatalf("header line:\n%s\nwant prefix\n%s", ls[0], wantHeader)
	}
	wantEntry := `{"v":1,"seq":2,"id":"r1","parentId":"s1","kind":"entry","ts":"2026-01-02T03:04:05.002Z","body":{"n":0,"text":"hello world"},"prev":"` + recs[0].H + `","h":"`
	if !strings.HasPrefix(string(ls[1]), wantEntry) {
		t.Fatalf("entry line:\n%s\nwant prefix\n%s", ls[1], wantEntry)
	}
	prev := ""
	for i, line := range ls {
		if len(line) < 73 || string(line[len(line)-73:len(line)-67]) != `,"h":"` || string(line[len(line)-3:]) != "\"}\n" {
			t.Fatalf("line %d: trailer shape: %q", i+1, line)
		}
		payload := append(bytes.Clone(line[:len(line)-73]), '}')
		sum := sha256.Sum256(append([]byte(prev), payload...))
		h := hex.EncodeToString(sum[:])
		if got := string(line[len(line)-67 : len(line)-3]); got != h {
			t.Fatalf("line %d: h %s, recomputed %s", i+1, got, h)
		}
		if !json.Valid(line) {
			t.Fatalf("line %d is not valid JSON", i+1)
		}
		prev = h
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Create(dir, header(), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := ledger.Create(dir, header(), ledger.Options{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := ledger.Create(t.TempDir(), ledger.Header{Type: "chat", ID: "x"}, ledger.Options{}); err == nil {
		t.Fatal("unknown ledger type accepted")
	}
}

func TestIncompleteAndUnsupported(t *testing.T) {
	for _, data := range [][]byte{nil, []byte(`{"v":1,"seq":1,"id":"s1"`), make([]byte, 100)} {
		if _, _, _, err := openBytes(data); !errors.Is(err, ledger.ErrIncomplete) {
			t.Errorf("%q: %v, want ErrIncomplete", data, err)
		}
	}
	data, recs := fixture(t, 1)
	future := ledger.BuildLineVersionForTest(ledger.FormatVersion+1, 3, "f1", "", "entry", time.Now(), []byte(`{}`), recs[1].H)
	_, _, _, err := openBytes(join(data, future))
	if !errors.Is(err, ledger.ErrUnsupportedVersion) || errors.Is(err, ledger.ErrCorrupt) {
		t.Fatalf("newer format: %v", err)
	}
}

func TestVerifyAndReadOnly(t *testing.T) {
	data, recs := fixture(t, 3)
	m := ledgertest.NewMemFS()
	m.MkdirAll(memDir)
	m.WriteFile(memPath, data)
	opts := ledger.Options{FS: m}
	rep, err := ledger.Verify(memDir, opts)
	if err != nil || rep.HeadSeq != 4 || rep.HeadHash != recs[3].H || rep.Size != int64(len(data)) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// A writer holds the lock: read-only access still works.
	w, _, err := ledger.Open(memDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	torn := append(bytes.Clone(data), `{"v":1,"seq":5,"id":"r9"`...)
	m.WriteFile(memPath, torn)
	rep, err = ledger.Verify(memDir, opts)
	if !errors.Is(err, ledger.ErrTornTail) || rep == nil || rep.HeadSeq != 4 || rep.Torn == nil || rep.Torn.Offset != int64(len(data)) {
		t.Fatalf("verify torn: %+v %v", rep, err)
	}
	r, rep, err := ledger.OpenReadOnly(memDir, opts)
	if err != nil || rep.Torn == nil {
		t.Fatalf("read-only torn: %+v %v", rep, err)
	}
	n := 0
	for _, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("read-only exposed %d records, want 4", n)
	}
	if _, err := r.Append(ledger.Entry{Kind: "a"}); !errors.Is(err, ledger.ErrReadOnly) {
		t.Fatalf("read-only append: %v", err)
	}
	if got, _ := m.ReadFile(memPath); !bytes.Equal(got, torn) {
		t.Fatal("read-only access changed the file")
	}
}

func TestConcurrentAppends(t *testing.T) {
	m := ledgertest.NewMemFS()
	l, err := ledger.Create(memDir, header(), ledger.Options{FS: m})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := l.Append(ledger.Entry{Kind: "entry", Body: []int{g, i}, NoSync: i%2 == 0}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Readers may iterate while appends continue.
	wg.Go(func() {
		for range 5 {
			for _, err := range l.Records() {
				if err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.Verify(memDir, ledger.Options{FS: m})
	if err != nil || rep.HeadSeq != 401 {
		t.Fatalf("%+v %v", rep, err)
	}
}

func TestTooLarge(t *testing.T) {
	m := ledgertest.NewMemFS()
	l, err := ledger.Create(memDir, header(), testOptions(m, "r"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Find the overhead of a record with a string body, then hit the cap exactly.
	probe, err := l.Append(ledger.Entry{Kind: "blob", ID: "probe", Body: ""})
	if err != nil {
		t.Fatal(err)
	}
	size, _ := m.ReadFile(memPath)
	overhead := len(size) - int(probe.Offset) // line of an empty string body, id "probe"
	body := strings.Repeat("a", ledger.MaxLineBytes-overhead)
	if _, err := l.Append(ledger.Entry{Kind: "blob", ID: "probf", Body: body + "a"}); !errors.Is(err, ledger.ErrTooLarge) ||
		!strings.Contains(err.Error(), "PutBlob") {
		t.Fatalf("line over the cap: %v", err)
	}
	r, err := l.Append(ledger.Entry{Kind: "blob", ID: "probf", Body: body})
	if err != nil {
		t.Fatalf("line at the cap: %v", err)
	}
	after, _ := m.ReadFile(memPath)
	if got := len(after) - int(r.Offset); got != ledger.MaxLineBytes {
		t.Fatalf("line is %d bytes, want exactly %d", got, ledger.MaxLineBytes)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Verify(memDir, ledger.Options{FS: m}); err != nil {
		t.Fatalf("a line at the cap must verify: %v", err)
	}
}

func TestBlobs(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Create(dir, header(), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), (2<<20)/16) // 2 MiB: too big for a line
	digest, err := l.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if digest != hex.EncodeToString(sum[:]) {
		t.Fatalf("digest %s", digest)
	}
	path := filepath.Join(dir, "blobs", "sha256", digest[:2], digest)
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(data)) {
		t.Fatalf("blob file: %v %v", fi, err)
	}
	if _, err := l.Append(ledger.Entry{Kind: "artifact", Body: map[string]any{"digest": digest, "size": len(data)}}); err != nil {
		t.Fatal(err)
	}
	if again, err := l.PutBlob(data); err != nil || again != digest {
		t.Fatalf("second put: %s %v", again, err)
	}
	got, err := l.Blob(digest)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("round trip: %v", err)
	}
	if err := os.WriteFile(path, append(data[:len(data)-1], 'X'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Blob(digest); !errors.Is(err, ledger.ErrBlobDigest) {
		t.Fatalf("tampered blob: %v", err)
	}
	if _, err := l.Blob("../../etc/passwd"); err == nil {
		t.Fatal("non-digest accepted")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestSalvage(t *testing.T) {
	data, recs := fixture(t, 4)
	ls := lines(data)
	bad := join(ls[0], ls[1], ls[3], ls[4]) // line 3 (seq 3) deleted
	m, _, _, err := openBytes(bad)
	wantCorrupt(t, err, int64(len(ls[0])+len(ls[1])), 3)
	opts := testOptions(m, "v")
	rep, err := ledger.Salvage(memDir, "/home/sessions/s1-salvaged", opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeadSeq != 3 || len(rep.Warnings) != 1 {
		t.Fatalf("salvage report %+v", rep)
	}
	l, _, err := ledger.Open("/home/sessions/s1-salvaged", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.CheckAnchor(2, recs[1].H); err != nil {
		t.Fatal(err)
	}
	var last ledger.Record
	for r, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	var info ledger.SalvageInfo
	if err := json.Unmarshal(last.Body, &info); err != nil || last.Kind != ledger.KindSalvage ||
		info.DiscardedBytes != int64(len(ls[3])+len(ls[4])) {
		t.Fatalf("salvage record %s %+v %v", last.Body, info, err)
	}
	if got, _ := m.ReadFile(memPath); !bytes.Equal(got, bad) {
		t.Fatal("salvage changed the source")
	}
}

func TestSkippable(t *testing.T) {
	if !ledger.Skippable("x-usage") || ledger.Skippable("intent") || ledger.Skippable("xusage") {
		t.Fatal("Skippable")
	}
}
