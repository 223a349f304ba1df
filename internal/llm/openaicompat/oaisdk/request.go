package oaisdk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/llm"
)

// emptySchema is the schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// ToolSchema returns the JSON schema of t as sent: its own when it is a JSON object, an object
// schema without properties when it is empty, and otherwise an llm.KindInvalid error naming
// the tool.
func ToolSchema(t llm.ToolSpec) (json.RawMessage, *llm.Error) {
	s := bytes.TrimSpace(t.Schema)
	if len(s) == 0 {
		return emptySchema, nil
	}
	if s[0] != '{' || !json.Valid(s) {
		return nil, &llm.Error{Kind: llm.KindInvalid, Message: fmt.Sprintf("tool %q: the schema is not a JSON object", t.Name)}
	}
	return s, nil
}

// DataURL returns an image part as a base64 data URL.
func DataURL(p llm.Part) string {
	return "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

// HistoryArguments returns the arguments of a past tool call as sent back to the server:
// verbatim when they are valid JSON, "{}" otherwise (a truncated or invalid call the tool
// result already reports; servers that render chat templates reject invalid JSON).
func HistoryArguments(args string) string {
	if json.Valid([]byte(args)) {
		return args
	}
	return "{}"
}
