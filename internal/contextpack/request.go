package contextpack

import (
	"encoding/json"
	"strings"

	"github.com/reinhq/rein/internal/llm"
)

// ImageTokens is the flat estimate for one image part: providers price images by their pixel
// size, which an offline estimate does not decode.
const ImageTokens = 1200

// ToolSection measures one tool as the request carries it: its name, description and JSON
// schema, as the provider-neutral JSON encoding of the spec.
func ToolSection(spec llm.ToolSpec, est Estimator) Section {
	data, err := json.Marshal(spec)
	if err != nil { // a schema that is not JSON cannot be sent either; measure what there is
		data = []byte(spec.Name + spec.Description + string(spec.Schema))
	}
	s := Section{Name: SectionTool, Source: spec.Name, Text: string(data), Bytes: len(data)}
	if est != nil {
		s.Tokens = est.Tokens(s.Text)
	}
	return s
}

// MessageSection measures one message under the given section name ([SectionMessage] or
// [SectionPrompt]). Its text is what the model reads of it: text and thinking parts, tool
// calls as name and arguments; an image counts its bytes and [ImageTokens]. Source is the
// role, with the tool name for a tool result ("tool:read").
func MessageSection(name string, m llm.Message, est Estimator) Section {
	var b strings.Builder
	images, imageBytes := 0, 0
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText, llm.PartThinking:
			b.WriteString(p.Text)
		case llm.PartToolCall:
			if p.Call != nil {
				b.WriteString(p.Call.Name)
				b.WriteString(p.Call.Arguments)
			}
		case llm.PartImage:
			images++
			imageBytes += len(p.Data)
		}
	}
	source := string(m.Role)
	if m.Role == llm.RoleTool && m.ToolName != "" {
		source += ":" + m.ToolName
	}
	s := Section{Name: name, Source: source, Text: b.String(), Bytes: b.Len() + imageBytes}
	if est != nil {
		s.Tokens = est.Tokens(s.Text) + images*ImageTokens
	}
	return s
}
