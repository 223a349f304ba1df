package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/ledger/ledgertest"
)

// assertStable opens the ledger again after a first Open reported rep: every durable record
// must be there, and this Open must find nothing to repair and change no byte (recovery is
// idempotent).
func assertStable(t *testing.T, m *ledgertest.MemFS, rep *ledger.Report, ack *acked) {
	t.Helper()
	before, _ := m.ReadFile(memPath)
	l, rep2, err := ledger.Open(memDir, testOptions(m, "again"))
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	if ack != nil {
		ack.check(t, l)
	}
	l.Close()
	if rep2.Torn != nil || len(rep2.Warnings) != 0 || rep2.HeadSeq != rep.HeadSeq || rep2.HeadHash != rep.HeadHash {
		t.Fatalf("second open is not idempotent: %+v after %+v", rep2, rep)
	}
	if after, _ := m.ReadFile(memPath); !bytes.Equal(before, after) {
		t.Fatal("second open changed the file")
	}
}

// TestTruncateLastRecordEveryOffset cuts the file at every byte offset of the last record
// (with and without zero fill after the cut): Open must find it intact or repair a torn tail
// back to the previous record, idempotently, keeping evidence.
func TestTruncateLastRecordEveryOffset(t *testing.T) {
	data, recs := fixture(t, 4)
	start := int(recs[len(recs)-1].Offset)
	if *long {
		start = len(lines(data)[0]) // every record in turn is the last one
	}
	for cut := start; cut <= len(data); cut++ {
		for _, fill := range []int{0, 1, 4096} {
			file := append(bytes.Clone(data[:cut]), make([]byte, fill)...)
			m, l, rep, err := openBytes(file)
			if err != nil {
				t.Fatalf("cut %d fill %d: %v", cut, fill, err)
			}
			l.Close()
			// The records that ended before the cut are kept, byte for byte.
			var keep []ledger.Record
			for _, r := range recs {
				if end := int(r.Offset) + len(lines(data)[r.Seq-1]); end <= cut {
					keep = append(keep, r)
				}
			}
			ack := newAcked()
			for _, r := range keep {
				ack.add(r, true)
			}
			intact := fill == 0 && (cut == len(data) || cut == int(keep[len(keep)-1].Offset)+len(lines(data)[len(keep)-1]))
			got, _ := m.ReadFile(memPath)
			if !bytes.HasPrefix(got, data[:int(keep[len(keep)-1].Offset)+len(lines(data)[len(keep)-1])]) {
				t.Fatalf("cut %d fill %d: the valid prefix changed", cut, fill)
			}
			if intact {
				if rep.Torn != nil || !bytes.Equal(got, file) {
					t.Fatalf("cut %d: intact file was repaired: %+v", cut, rep)
				}
			} else {
				checkRepaired(t, m, rep, file, int64(len(keep)))
			}
			assertStable(t, m, rep, ack)
		}
	}
}

// checkRepaired checks a torn-tail repair of file whose last valid record is lastGood.
func checkRepaired(t *testing.T, m *ledgertest.MemFS, rep *ledger.Report, file []byte, lastGood int64) {
	t.Helper()
	if rep.Torn == nil || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "W_LEDGER_TORN_TAIL_REPAIRED") {
		t.Fatalf("torn tail not reported: %+v", rep)
	}
	if rep.HeadSeq != lastGood+1 {
		t.Fatalf("head seq %d after repair, want the recovery record at %d", rep.HeadSeq, lastGood+1)
	}
	discarded := file[rep.Torn.Offset:]
	sum := sha256.Sum256(discarded)
	if rep.Torn.Bytes != int64(len(discarded)) || rep.Torn.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("torn tail %+v does not describe the %d discarded bytes", rep.Torn, len(discarded))
	}
	evidence, ok := m.ReadFile(filepath.Join(memDir, rep.Torn.Evidence))
	if !ok || !bytes.Equal(evidence, file) || rep.Torn.Evidence != fmt.Sprintf("%s%d", ledger.TornPrefix, lastGood) {
		t.Fatalf("evidence copy %q missing or different", rep.Torn.Evidence)
	}
	got, _ := m.ReadFile(memPath)
	ls := lines(got)
	var rec struct {
		Kind string          `json:"kind"`
		Body ledger.Recovery `json:"body"`
	}
	if err := json.Unmarshal(ls[len(ls)-1], &rec); err != nil || rec.Kind != ledger.KindRecovery ||
		rec.Body.TruncatedBytes != rep.Torn.Bytes || rec.Body.DiscardedSHA256 != rep.Torn.SHA256 || rec.Body.Evidence != rep.Torn.Evidence {
		t.Fatalf("recovery record %s: %v", ls[len(ls)-1], err)
	}
}

// workload is a scripted writer. It stops at the first error, like a process that dies.
// synced selects whether every append is fsynced (the policy for intents and results) or some
// are bookkeeping riding on the next fsync.
func workload(fsys ledger.FS, allSynced bool, ack *acked) (created bool, err error) {
	l, err := ledger.Create(memDir, header(), testOptions(fsys, "w"))
	if err != nil {
		return false, err
	}
	defer l.Close()
	hdr, hh := l.Head()
	ack.h[hdr] = hh
	ack.durable = hdr
	parent := "s1"
	for i := range 6 {
		noSync := !allSynced && i%3 != 2
		e := ledger.Entry{Kind: "entry", Parent: parent, Body: map[string]any{"i": i, "pad": strings.Repeat("x", 40*i)}, NoSync: noSync}
		if i == 3 {
			digest, err := l.PutBlob([]byte("artifact body"))
			if err != nil {
				return true, err
			}
			e.Body = map[string]string{"blob": digest}
		}
		r, err := l.Append(e)
		if err != nil {
			return true, err
		}
		ack.add(r, !noSync) // a synced append makes every earlier record durable too
		parent = r.ID
	}
	if err := l.Sync(); err != nil {
		return true, err
	}
	seq, _ := l.Head()
	ack.durable = seq
	return true, l.Close()
}

var errCrash = errors.New("simulated crash")

// TestPowerLoss stops the workload before each filesystem operation in turn (the process dies
// there) and then simulates a power loss on what it left: unsynced writes dropped, kept, torn
// or garbled, unsynced directory entries lost. With every append fsynced, Open must find an
// intact ledger or a torn tail, and every acknowledged record. With NoSync records in flight
// too: a hole (an unsynced record dropped or garbled, a later one kept) is a torn tail, because
// the records after it declare that it was not yet durable when they were written; Open never
// finds corruption after a power loss.
func TestPowerLoss(t *testing.T) {
	seeds := 4
	if *long {
		seeds = 60
	}
	for _, allSynced := range []bool{true, false} {
		t.Run(fmt.Sprintf("allSynced=%v", allSynced), func(t *testing.T) {
			outcomes := map[string]int{}
			for n := 1; ; n++ {
				m := ledgertest.NewMemFS()
				m.MkdirAll(filepath.Dir(memDir))
				dead := false
				ffs := &ledgertest.FaultFS{FS: m, Inject: func(o ledgertest.Op) *ledgertest.Fault {
					if o.N >= n {
						dead = true
						return &ledgertest.Fault{Err: errCrash}
					}
					return nil
				}}
				ack := newAcked()
				created, err := workload(ffs, allSynced, ack)
				if err == nil && !dead {
					if n < 20 {
						t.Fatalf("the workload did only %d operations", n)
					}
					break
				}
				if err != nil && !errors.Is(err, errCrash) {
					t.Fatalf("op %d: %v", n, err)
				}
				rng := rand.New(rand.NewPCG(uint64(n), 7))
				modes := []ledgertest.CrashMode{ledgertest.DropUnsynced, ledgertest.KeepUnsynced}
				for range seeds {
					modes = append(modes, ledgertest.TornUnsynced, ledgertest.RandomUnsynced)
				}
				for i, mode := range modes {
					crashed := m.Crash(mode, rng)
					outcomes[checkAfterCrash(t, fmt.Sprintf("op %d crash %d (mode %d)", n, i, mode), crashed, created, allSynced, ack)]++
				}
			}
			t.Logf("outcomes: %v", outcomes)
		})
	}
}

// checkAfterCrash opens a crashed filesystem and checks what it must hold.
func checkAfterCrash(t *testing.T, what string, m *ledgertest.MemFS, created, allSynced bool, ack *acked) string {
	t.Helper()
	l, rep, err := ledger.Open(memDir, testOptions(m, "chk"))
	switch {
	case err == nil:
		ack.check(t, l)
		l.Close()
	case !created && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, ledger.ErrIncomplete)):
		return "never created"
	default:
		t.Fatalf("%s: %v", what, err)
	}
	assertStable(t, m, rep, ack)
	if rep.Torn != nil {
		return "torn tail repaired"
	}
	return "intact"
}

// TestFaultInjection fails each filesystem operation of the workload in turn, once or from then
// on, with the errors real disks give: ENOSPC (nothing or part written), a silent short write,
// EIO on fsync and elsewhere. The error must reach the caller, a failed ledger write or fsync
// must fault the ledger (later writes refuse), and the file must reopen — after a restart and
// after a power loss — with every acknowledged record.
func TestFaultInjection(t *testing.T) {
	type fault struct {
		name string
		for_ func(o ledgertest.Op) *ledgertest.Fault
	}
	faults := []fault{
		{"ENOSPC", func(o ledgertest.Op) *ledgertest.Fault { return &ledgertest.Fault{Err: syscall.ENOSPC} }},
		{"ENOSPC after part", func(o ledgertest.Op) *ledgertest.Fault {
			return &ledgertest.Fault{Err: syscall.ENOSPC, Written: o.Size / 2}
		}},
		{"silent short write", func(o ledgertest.Op) *ledgertest.Fault {
			if o.Kind != "write" {
				return &ledgertest.Fault{Err: syscall.EIO}
			}
			return &ledgertest.Fault{Written: o.Size - 1}
		}},
		{"EIO", func(o ledgertest.Op) *ledgertest.Fault { return &ledgertest.Fault{Err: syscall.EIO} }},
	}
	for _, persistent := range []bool{false, true} {
		for _, f := range faults {
			for n := 1; ; n++ {
				m := ledgertest.NewMemFS()
				m.MkdirAll(filepath.Dir(memDir))
				var hit *ledgertest.Op
				ffs := &ledgertest.FaultFS{FS: m, Inject: func(o ledgertest.Op) *ledgertest.Fault {
					if o.N == n || persistent && o.N > n {
						if hit == nil {
							hit = &o
						}
						return f.for_(o)
					}
					return nil
				}}
				ack := newAcked()
				what := fmt.Sprintf("%s at op %d (persistent %v)", f.name, n, persistent)
				created, err := faultWorkload(t, what, ffs, ack)
				if hit == nil {
					if err != nil {
						t.Fatalf("%s: error without a fault: %v", what, err)
					}
					break
				}
				if err == nil && hit.Kind != "close" && hit.Kind != "read" {
					t.Fatalf("%s: the fault on %+v did not reach the caller", what, *hit)
				}
				for _, mode := range []ledgertest.CrashMode{ledgertest.KeepUnsynced, ledgertest.DropUnsynced} {
					crashed := m.Crash(mode, rand.New(rand.NewPCG(1, 2)))
					checkAfterCrash(t, what, crashed, created, true, ack)
				}
			}
		}
	}
}

// faultWorkload is workload (all appends synced) checking fault semantics as it goes.
func faultWorkload(t *testing.T, what string, fsys ledger.FS, ack *acked) (created bool, err error) {
	t.Helper()
	l, err := ledger.Create(memDir, header(), testOptions(fsys, "w"))
	if err != nil {
		return false, err
	}
	defer l.Close()
	seq, hh := l.Head()
	ack.add(ledger.Record{Seq: seq, H: hh}, true)
	for i := range 4 {
		e := ledger.Entry{Kind: "entry", Body: map[string]any{"i": i}}
		if i == 2 {
			digest, err := l.PutBlob([]byte("artifact"))
			if err != nil {
				if errors.Is(err, ledger.ErrFaulted) {
					t.Fatalf("%s: a blob error faulted the ledger: %v", what, err)
				}
				return true, err
			}
			e.Body = map[string]string{"blob": digest}
		}
		r, err := l.Append(e)
		if err != nil {
			if errors.Is(err, ledger.ErrFaulted) {
				var errno syscall.Errno
				if !errors.As(err, &errno) && !errors.Is(err, io.ErrShortWrite) {
					t.Fatalf("%s: the cause is not wrapped: %v", what, err)
				}
				// Later writes refuse, even if the disk has recovered.
				if _, err2 := l.Append(ledger.Entry{Kind: "entry"}); !errors.Is(err2, ledger.ErrFaulted) {
					t.Fatalf("%s: append after a fault: %v", what, err2)
				}
				if err2 := l.Sync(); !errors.Is(err2, ledger.ErrFaulted) {
					t.Fatalf("%s: sync after a fault: %v", what, err2)
				}
				if _, err2 := l.PutBlob([]byte("x")); !errors.Is(err2, ledger.ErrFaulted) {
					t.Fatalf("%s: blob after a fault: %v", what, err2)
				}
			}
			return true, err
		}
		ack.add(r, true)
	}
	return true, l.Close()
}

// TestRepairUnderFault fails each operation of a torn-tail repair in turn (a fault during
// recovery from a crash): the next clean Open, after a restart or a power loss, must still
// repair or find the file intact, with every acknowledged record.
func TestRepairUnderFault(t *testing.T) {
	data, recs := fixture(t, 3)
	torn := append(bytes.Clone(data), `{"v":1,"seq":5,"id":"tor`...)
	ack := newAcked()
	for _, r := range recs {
		ack.add(r, true)
	}
	for _, persistent := range []bool{false, true} {
		for n := 1; ; n++ {
			m := ledgertest.NewMemFS()
			m.MkdirAll(memDir)
			m.WriteFile(memPath, torn)
			hit := false
			ffs := &ledgertest.FaultFS{FS: m, Inject: func(o ledgertest.Op) *ledgertest.Fault {
				if o.N == n || persistent && o.N > n {
					hit = true
					return &ledgertest.Fault{Err: syscall.EIO, Written: o.Size / 3}
				}
				return nil
			}}
			l, _, err := ledger.Open(memDir, testOptions(ffs, "f"))
			if err == nil {
				l.Close()
			}
			if !hit {
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			for _, mode := range []ledgertest.CrashMode{ledgertest.KeepUnsynced, ledgertest.DropUnsynced, ledgertest.RandomUnsynced} {
				crashed := m.Crash(mode, rand.New(rand.NewPCG(uint64(n), 3)))
				checkAfterCrash(t, fmt.Sprintf("repair fault at op %d", n), crashed, true, true, ack)
			}
		}
	}
}
