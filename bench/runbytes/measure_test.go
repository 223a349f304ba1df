package runbytes

import (
	"encoding/json"
	"testing"
)

// TestMeasureTwoSessions checks the arithmetic on two hand-made sessions: the split of a first
// request, the session boundary, and the one-session equivalent carrying the first
// session's transcript.
func TestMeasureTwoSessions(t *testing.T) {
	sys, user := `{"role":"system","content":"S"}`, `{"role":"user","content":"pack"}`
	call := `{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]}`
	result := `{"role":"tool","tool_call_id":"c1","content":"r"}`
	tools := `[{"type":"function","function":{"name":"read"}}]`
	body := func(msgs ...string) []byte {
		b := `{"model":"m","messages":[`
		for i, m := range msgs {
			if i > 0 {
				b += ","
			}
			b += m
		}
		return []byte(b + `],"tools":` + tools + `}`)
	}
	done, _ := json.Marshal("ok")
	reqs := []Request{
		{Stage: "a", Body: body(sys, user)},
		{Stage: "a", Body: body(sys, user, call, result), Answer: chatMessage{Content: done}},
		{Stage: "b", Body: body(sys, user)},
	}
	f, err := Measure(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sessions) != 2 || f.Requests != 3 {
		t.Fatalf("%d sessions, %d requests", len(f.Sessions), f.Requests)
	}
	a, b := f.Sessions[0], f.Sessions[1]
	if a.Requests != 2 || a.FirstBytes != len(reqs[0].Body) || a.FixedBytes != len(sys)+len(tools) || a.PackBytes != len(user) {
		t.Errorf("session a: %+v", a)
	}
	answer := `{"content":"ok","role":"assistant"}`
	if want := len(user) + 1 + len(call) + 1 + len(result) + 1 + len(answer) + 1; a.TranscriptBytes != want {
		t.Errorf("transcript of a: %d B, want %d", a.TranscriptBytes, want)
	}
	if a.OneSessionBytes != a.TotalBytes {
		t.Errorf("the first session carries no history: %d vs %d", a.OneSessionBytes, a.TotalBytes)
	}
	if want := len(reqs[2].Body) + a.TranscriptBytes + 1; b.OneSessionBytes != want {
		t.Errorf("session b as one session: %d B, want %d", b.OneSessionBytes, want)
	}
	total := len(reqs[0].Body) + len(reqs[1].Body) + len(reqs[2].Body)
	if f.TotalBytes != total || f.Ratio != float64(total)/float64(a.OneSessionBytes+b.OneSessionBytes) {
		t.Errorf("total %d (want %d), ratio %f", f.TotalBytes, total, f.Ratio)
	}
}
