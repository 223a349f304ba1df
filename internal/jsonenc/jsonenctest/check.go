package jsonenctest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Check fills cases values of type T with Fill and fails t wherever enc's bytes differ from
// json.Marshal's, or one of the two refuses a value the other encodes.
func Check[T any](t *testing.T, cases int, seed uint64, enc func(*T) ([]byte, error)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	failed := 0
	for i := range cases {
		v := new(T)
		if bad := Fill(rng, v); bad != "" {
			t.Fatalf("%T: cannot fill a field of type %s; teach jsonenctest.Fill and the encoder about it", *v, bad)
		}
		want, werr := json.Marshal(v)
		got, gerr := enc(v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) && werr == nil {
			t.Errorf("%T case %d:\n got %s (err %v)\nwant %s (err %v)\nvalue %#v", *v, i, got, gerr, want, werr, *v)
			if failed++; failed > 5 {
				t.FailNow()
			}
		}
	}
}
