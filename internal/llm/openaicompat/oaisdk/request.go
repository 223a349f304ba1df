package oaisdk

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/llm"
)

// ToolSchemas decodes the JSON schemas of tools into the maps the SDK's tool parameters take.
// An empty schema becomes an object schema without properties; invalid JSON is an
// llm.KindInvalid error naming the tool.
func ToolSchemas(tools []llm.ToolSpec) ([]map[string]any, *llm.Error) {
	out := make([]map[string]any, len(tools))
	for i, t := range tools {
		if len(strings.TrimSpace(string(t.Schema))) == 0 {
			out[i] = map[string]any{"type": "object", "properties": map[string]any{}}
			continue
		}
		if err := json.Unmarshal(t.Schema, &out[i]); err != nil || out[i] == nil {
			return nil, &llm.Error{Kind: llm.KindInvalid, Message: fmt.Sprintf("tool %q: the schema is not a JSON object", t.Name)}
		}
	}
	return out, nil
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
