package session_test

import "encoding/json"

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// jsonRaw passes s to the ledger as raw JSON (which the ledger checks strictly).
func jsonRaw(s string) json.RawMessage { return json.RawMessage(s) }
