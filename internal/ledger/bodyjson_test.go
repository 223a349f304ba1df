package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc/jsonenctest"
	"github.com/reinhq/rein/internal/ledger"
)

func TestHeaderAppendJSONMatchesMarshal(t *testing.T) {
	jsonenctest.Check(t, 3000, 21, func(h *ledger.Header) ([]byte, error) { return h.AppendJSON(nil) })
}

// selfEncoded is a body with its own encoder, which writes something json.Marshal would not,
// so the record shows which one the ledger used.
type selfEncoded struct {
	out string
	err error
}

func (s selfEncoded) AppendJSON(b []byte) ([]byte, error) { return append(b, s.out...), s.err }

func TestAppendUsesTheBodysOwnEncoder(t *testing.T) {
	l, err := ledger.Create(t.TempDir(), header(), testOptions(nil, "e"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := l.Append(ledger.Entry{Kind: "note", Body: selfEncoded{out: `{"by":"AppendJSON"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Body) != `{"by":"AppendJSON"}` {
		t.Fatalf("body recorded as %s, want the body's own encoding", r.Body)
	}
	// Bodies without an encoder of their own are still json.Marshal's.
	plain := struct {
		A string          `json:"a"`
		R json.RawMessage `json:"r"`
	}{"<x>", json.RawMessage(` { "k" : 1 } `)}
	r, err = l.Append(ledger.Entry{Kind: "note", Body: plain})
	want, _ := json.Marshal(plain)
	if err != nil || !bytes.Equal(r.Body, want) {
		t.Fatalf("plain body recorded as %s (%v), want %s", r.Body, err, want)
	}
}

func TestAppendChecksTheBodysOwnEncoding(t *testing.T) {
	l, err := ledger.Create(t.TempDir(), header(), testOptions(nil, "e"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, body := range map[string]selfEncoded{
		"duplicate keys": {out: `{"a":1,"a":2}`},
		"not JSON":       {out: `{"a":`},
	} {
		if _, err := l.Append(ledger.Entry{Kind: "note", Body: body}); err == nil || !strings.Contains(err.Error(), "not strict JSON") {
			t.Errorf("%s: Append: %v, want the strict check's refusal", name, err)
		}
	}
	cause := errors.New("cost is NaN")
	if _, err := l.Append(ledger.Entry{Kind: "note", Body: selfEncoded{err: cause}}); !errors.Is(err, cause) {
		t.Errorf("a failing encoder: Append: %v, want its error", err)
	}
	if recs := countRecords(t, l); recs != 1 {
		t.Fatalf("%d records after refused bodies, want only the header", recs)
	}
}

func countRecords(t *testing.T, l *ledger.Ledger) int {
	t.Helper()
	n := 0
	for _, err := range l.Records() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}
