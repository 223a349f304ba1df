package strictjson

import (
	"errors"
	"strings"
	"testing"
)

func TestOptionsMaxDocumentBytes(t *testing.T) {
	o := Options{MaxDocumentBytes: 16}
	if _, err := o.Decode(`{"a":"0123456"}`); err != nil { // 15 bytes
		t.Fatalf("document under the limit refused: %v", err)
	}
	if _, err := o.Decode(`{"a":"01234567"}`); err != nil { // exactly 16
		t.Fatalf("document at the limit refused: %v", err)
	}
	big := `{"a":"012345678"}`
	_, err := o.Decode(big)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "17 bytes, more than the 16") {
		t.Errorf("Decode(%d bytes) = %v, want ErrTooLarge", len(big), err)
	}
	var v struct {
		A string `json:"a"`
	}
	if err := o.Unmarshal([]byte(big), &v); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Unmarshal over the limit = %v, want ErrTooLarge", err)
	}
	if err := o.Unmarshal([]byte(`{"a":"x"}`), &v); err != nil || v.A != "x" {
		t.Errorf("Unmarshal under the limit = %v, %+v", err, v)
	}
	// The other checks still apply under a limit.
	if _, err := o.Decode(`{"a":1,"a":2}`); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("duplicate key under a limit = %v", err)
	}
	// The zero value adds no limit.
	if _, err := (Options{}).Decode(`[` + strings.Repeat(`"x",`, 10000) + `"x"]`); err != nil {
		t.Errorf("zero Options refused a large document: %v", err)
	}
}
