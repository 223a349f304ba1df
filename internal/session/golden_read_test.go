package session_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// The tests below read the committed golden ledgers with the real Open and Load and compare what
// they decode with values written out here field by field: renaming a JSON tag in llm or session
// (or dropping a field) makes them fail, because the committed bytes no longer decode (records
// are decoded strictly) or decode to something else. Regenerating the files does not hide such
// a change: their digests are pinned in goldenDigests, and the bodies of the records no state
// keeps are decoded here with this test's own tags.

// intentView is an Intent's recorded fields and progress.
type intentView struct {
	ID, Lane     string
	Seq          int64
	Kind         kernel.IntentKind
	Turn         int
	Reserved     []string
	Call         *llm.ToolCall
	Index        int
	Replay       tool.Replay
	Attempt      int
	Retry        *session.RetryPolicy
	LastAttempt  int
	Materialized []string
	Closed       string
	Cancelled    bool
}

// stateView is everything a State holds, in comparable form.
type stateView struct {
	Header           ledger.Header
	Order            []session.Entry
	Intents          []intentView
	Lanes            map[string]session.Lane
	Facts            map[string]string
	Usage            llm.Usage
	Created, Updated time.Time
}

// Bodies of the records no state keeps, as this test reads them.
type (
	runRecord struct {
		Lane   string `json:"lane"`
		Event  string `json:"event"`
		Status string `json:"status,omitempty"`
	}
	closedRecord struct {
		Intent string     `json:"intent"`
		Action string     `json:"action"`
		Reason string     `json:"reason,omitempty"`
		Usage  *llm.Usage `json:"usage,omitempty"`
	}
	attemptRecord struct {
		Intent  string `json:"intent"`
		Attempt int    `json:"attempt"`
	}
	cancelRecord struct {
		Lane    string   `json:"lane"`
		Intents []string `json:"intents"`
		Reason  string   `json:"reason,omitempty"`
	}
)

// auditRecord is one such record: its seq and decoded body.
type auditRecord struct {
	Seq  int64
	Body any
}

// readGolden loads the committed golden ledger name (copied, so that nothing can change it)
// with Load and with Open, and returns the state and the records no state keeps.
func readGolden(t *testing.T, name string) (stateView, []auditRecord) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ledger.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, rep, err := session.Load(dir)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if rep.Torn != nil || len(rep.Warnings) > 0 {
		t.Errorf("load %s: %+v", name, rep)
	}
	s, _, err := session.Open(dir, session.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	if diff := cmp.Diff(st.Context(), s.Context()); diff != "" {
		t.Errorf("Open and Load disagree:\n%s", diff)
	}
	s.Close()
	if after, _ := os.ReadFile(filepath.Join(dir, ledger.FileName)); !bytes.Equal(after, data) {
		t.Fatalf("opening %s changed it", name)
	}
	v := stateView{Header: st.Header, Lanes: map[string]session.Lane{}, Facts: st.Facts, Usage: st.Usage, Created: st.Created, Updated: st.Updated}
	for _, e := range st.Order {
		if st.Entries[e.ID] != e {
			t.Errorf("entry %s: Order and Entries disagree", e.ID)
		}
		v.Order = append(v.Order, *e)
	}
	for _, in := range st.Intents {
		v.Intents = append(v.Intents, intentView{ID: in.ID, Lane: in.Lane, Seq: in.Seq, Kind: in.Kind, Turn: in.Turn, Reserved: in.Reserved,
			Call: in.Call, Index: in.Index, Replay: in.Replay, Attempt: in.Attempt, Retry: in.Retry, LastAttempt: in.LastAttempt, Materialized: in.Materialized,
			Closed: in.Closed, Cancelled: in.Cancelled})
	}
	sort.Slice(v.Intents, func(i, j int) bool { return v.Intents[i].Seq < v.Intents[j].Seq })
	for name, l := range st.Lanes {
		v.Lanes[name] = *l
	}
	return v, auditRecords(t, dir)
}

// auditRecords decodes, strictly, the bodies of the records no state keeps.
func auditRecords(t *testing.T, dir string) []auditRecord {
	t.Helper()
	l, _, err := ledger.OpenReadOnly(dir, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []auditRecord
	for r, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		var body any
		switch r.Kind {
		case session.KindHook:
			body = &session.HookRun{}
		case session.KindRun:
			body = &runRecord{}
		case session.KindClosed:
			body = &closedRecord{}
		case session.KindCancel:
			body = &cancelRecord{}
		case session.KindAttempt:
			body = &attemptRecord{}
		case ledger.KindRecovery:
			body = &ledger.Recovery{}
		default:
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(body); err != nil {
			t.Fatalf("seq %d (%s): %v", r.Seq, r.Kind, err)
		}
		out = append(out, auditRecord{Seq: r.Seq, Body: body})
	}
	return out
}

func checkGolden(t *testing.T, name string, want stateView, wantAudit []auditRecord) {
	t.Helper()
	got, audit := readGolden(t, name)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: decoded state (-want +got):\n%s", name, diff)
	}
	if diff := cmp.Diff(wantAudit, audit); diff != "" {
		t.Errorf("%s: records no state keeps (-want +got):\n%s", name, diff)
	}
}

func goldenHeader(id string, bindings map[string]string) ledger.Header {
	b := map[string]string{"sessionFormat": "1", "cwd": "/src/app"}
	for k, v := range bindings {
		b[k] = v
	}
	return ledger.Header{Type: ledger.TypeSession, ID: id, Format: 1, Bindings: b}
}

func reserved(ids ...string) []string { return ids }

func materialized(ids ...string) []string { return ids }
