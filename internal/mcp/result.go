package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// maxImageBytes bounds one image a tool returns; a larger one is replaced by a note.
const maxImageBytes = 4 << 20

// Output is a tool result in rein's terms, capped like a built-in tool's output.
type Output struct {
	Content []llm.Part
	IsError bool
	Details Details
}

// Details describe a result for UIs and logs (never sent to the model).
type Details struct {
	// Truncation is set when the text was cut to the shared output limits.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
	// Omitted counts content blocks replaced by a note (audio, oversize images, binary
	// resources).
	Omitted int `json:"omitted,omitempty"`
}

// convert turns a tools/call result into capped content: text blocks (and resources' text,
// resource links, the structured content when no text carries it) joined into one text
// part cut to tool.MaxLines / tool.MaxBytes; images kept up to maxImageBytes each.
func convert(res *callToolResult) Output {
	var out Output
	var texts []string
	var images []llm.Part
	note := func(format string, args ...any) {
		out.Details.Omitted++
		texts = append(texts, fmt.Sprintf(format, args...))
	}
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			texts = append(texts, c.Text)
		case "image":
			if len(c.Data) > maxImageBytes {
				note("[image (%s, %s) omitted: larger than %s]", c.MIMEType, tool.FormatSize(len(c.Data)), tool.FormatSize(maxImageBytes))
				continue
			}
			images = append(images, llm.Part{Type: llm.PartImage, MIMEType: c.MIMEType, Data: c.Data})
		case "audio":
			note("[audio (%s, %s) omitted: rein does not pass audio to models]", c.MIMEType, tool.FormatSize(len(c.Data)))
		case "resource_link":
			texts = append(texts, fmt.Sprintf("[resource link: %s (%s)]", c.URI, c.Name))
		case "resource":
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				texts = append(texts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			default:
				note("[resource %s (%s, %s of binary data) omitted]", r.URI, r.MIMEType, tool.FormatSize(len(r.Blob)))
			}
		default:
			note("[a %q content block omitted]", c.Type)
		}
	}
	if len(texts) == 0 {
		// Compact, keys sorted: the same bytes whatever spacing the server used.
		if b, ok := compactSorted(res.StructuredContent); ok {
			texts = append(texts, string(b))
		}
	}
	text := strings.Join(texts, "\n")
	if t, cut := capText(text); cut != nil {
		text, out.Details.Truncation = t, cut
	}
	if text != "" || len(images) == 0 {
		out.Content = append(out.Content, llm.Text(text))
	}
	out.Content = append(out.Content, images...)
	out.IsError = res.IsError
	return out
}

// capText cuts text to the shared output limits, keeping its beginning, with a notice; a
// first line longer than the byte limit is cut inside (MCP results are often one JSON line).
func capText(text string) (string, *tool.Truncation) {
	tr := tool.TruncateHead(text, tool.MaxLines, tool.MaxBytes)
	if !tr.Truncated {
		return text, nil
	}
	kept := tr.Content
	if tr.FirstLineExceedsLimit {
		cut := tool.MaxBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		kept = text[:cut]
		tr.OutputBytes, tr.OutputLines = len(kept), 1
	}
	notice := fmt.Sprintf("\n\n[output truncated: %d of %d lines, %s of %s shown; ask the tool for less (a narrower query, a page, a range)]",
		tr.OutputLines, tr.TotalLines, tool.FormatSize(tr.OutputBytes), tool.FormatSize(tr.TotalBytes))
	return kept + notice, &tr
}
