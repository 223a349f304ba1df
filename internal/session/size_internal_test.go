package session

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/llm"
)

// TestMaxJSONSizeBoundsTheEncoding: maxJSONSize is at least the length of the message's JSON
// for messages whose every field is set, its strings made of the characters JSON escapes the
// longest, and it stays so when the message types gain fields (the field counts are pinned:
// a new field fails here until maxJSONSize counts it).
func TestMaxJSONSizeBoundsTheEncoding(t *testing.T) {
	for typ, fields := range map[reflect.Type]int{
		reflect.TypeFor[llm.Message](): 16, reflect.TypeFor[llm.Part](): 7, reflect.TypeFor[llm.ToolCall](): 4,
		reflect.TypeFor[llm.Error](): 5,
	} {
		if typ.NumField() != fields {
			t.Errorf("%s has %d fields, not %d: count the new ones in maxJSONSize, then update this test", typ, typ.NumField(), fields)
		}
	}
	for _, n := range []int{0, 1, 7, 300} {
		s := strings.Repeat("\x01<", n)
		call := &llm.ToolCall{ID: s, Name: s, Arguments: s, ProviderID: s}
		var u llm.Usage
		fillNumbers(reflect.ValueOf(&u).Elem())
		m := llm.Message{Role: llm.RoleAssistant, Provider: s, API: s, Model: s, ResponseID: s, Usage: &u, StopReason: llm.StopReason(s),
			Err:        &llm.Error{Kind: llm.ErrorKind(s), Status: math.MinInt, Message: s, Retryable: true, RetryAfterMs: math.MinInt64},
			ToolCallID: s, ToolName: s, IsError: true, Details: json.RawMessage(`{"k":[1,2,3],"h":"` + strings.Repeat("<>&\u2028", n) + `"}`), Time: math.MinInt64,
			Content: []llm.Part{{Type: llm.PartType(s), Text: s, Signature: s, Redacted: true, MIMEType: s, Data: []byte(s), Call: call}, {Type: "text", Text: s}}}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if max := maxJSONSize(m); len(raw) > max {
			t.Errorf("strings of %d bytes: %d bytes of JSON, bound %d", 2*n, len(raw), max)
		}
		if raw, _ := json.Marshal(call); len(raw) > maxCallJSONSize(call) {
			t.Errorf("call with strings of %d bytes: %d bytes of JSON, bound %d", 2*n, len(raw), maxCallJSONSize(call))
		}
	}
}

// fillNumbers sets every number in v to its longest decimal form.
func fillNumbers(v reflect.Value) {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(math.MinInt64)
	case reflect.Float64:
		v.SetFloat(-math.MaxFloat64 / 3)
	case reflect.Struct:
		for i := range v.NumField() {
			fillNumbers(v.Field(i))
		}
	}
}
