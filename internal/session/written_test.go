package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/jsonenc/jsonenctest"
	"github.com/reinhq/rein/internal/llm"
)

// checkWritten fills bodies of type T and compares what fromWritten makes of each with what
// decoding its JSON gives: where fromWritten takes a body, the two must be deeply equal. With
// valid (every string valid UTF-8) it must take every body; otherwise it must refuse every
// body whose decoding differs from it.
func checkWritten[T any](t *testing.T, cases int, seed uint64, valid bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	taken := 0
	for i := range cases {
		w := new(T)
		fill := jsonenctest.Fill
		if valid {
			fill = jsonenctest.FillValid
		}
		if bad := fill(rng, w); bad != "" {
			t.Fatalf("%T: cannot fill a field of type %s", *w, bad)
		}
		raw, err := json.Marshal(*w)
		if err != nil {
			continue // a body the ledger refuses to write
		}
		var decoded, copied T
		if err := decodeBody(raw, &decoded); err != nil {
			t.Fatalf("%T case %d: decoding %s: %v", *w, i, raw, err)
		}
		if !fromWritten(*w, &copied) {
			if valid {
				t.Fatalf("%T case %d: fromWritten refused a body of valid strings: %#v", *w, i, *w)
			}
			continue
		}
		taken++
		if !reflect.DeepEqual(copied, decoded) {
			t.Fatalf("%T case %d: fromWritten made\n%#v\nwhere decoding %s gives\n%#v", *w, i, copied, raw, decoded)
		}
	}
	if taken == 0 {
		t.Fatalf("%T: fromWritten took none of %d bodies", *new(T), cases)
	}
}

func TestWrittenBodiesEqualTheirDecoding(t *testing.T) {
	for _, valid := range []bool{true, false} {
		checkWritten[entryBody](t, 3000, 31, valid)
		checkWritten[intentBody](t, 3000, 32, valid)
		checkWritten[attemptBody](t, 500, 33, valid)
		checkWritten[closedBody](t, 1000, 34, valid)
		checkWritten[cancelBody](t, 1000, 35, valid)
		checkWritten[runBody](t, 500, 36, valid)
		checkWritten[factBody](t, 1000, 37, valid)
		checkWritten[laneBody](t, 500, 38, valid)
	}
}

func TestWrittenBodiesShareNothing(t *testing.T) {
	m := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a"), {Type: llm.PartImage, Data: []byte{1, 2}},
		llm.Call("c1", "read", "{}")}, Usage: &llm.Usage{Input: 1}, Err: &llm.Error{Kind: "x"}, Details: json.RawMessage(`{"a":1}`)}
	var e entryBody
	if !fromWritten(entryBody{Lane: MainLane, Message: m}, &e) {
		t.Fatal("fromWritten refused a plain entry")
	}
	m.Content[0].Text, m.Content[1].Data[0], m.Content[2].Call.Name = "changed", 9, "changed"
	m.Usage.Input, m.Err.Kind, m.Details[2] = 2, "changed", 'b'
	got := e.Message
	if got.Content[0].Text != "a" || got.Content[1].Data[0] != 1 || got.Content[2].Call.Name != "read" ||
		got.Usage.Input != 1 || got.Err.Kind != "x" || string(got.Details) != `{"a":1}` {
		t.Fatalf("the copy changed with the written message: %#v", got)
	}
	var in intentBody
	reserved := []string{"r1"}
	if !fromWritten(intentBody{Lane: MainLane, Reserved: reserved, Call: &llm.ToolCall{ID: "c"}, Retry: &RetryPolicy{MaxAttempts: 2}}, &in) {
		t.Fatal("fromWritten refused a plain intent")
	}
	if &in.Reserved[0] == &reserved[0] {
		t.Fatal("the intent's copy shares its reserved ids with the written body")
	}
}
