package contextpack

import (
	"fmt"
	"strings"
	"time"
)

// ToolLine is one entry of the tool list.
type ToolLine struct {
	Name    string
	Snippet string
}

// Prompt is the input of [SystemPrompt].
type Prompt struct {
	Tools []ToolLine
	// Dir is the working directory shown to the model.
	Dir string
	// Date is shown as YYYY-MM-DD.
	Date time.Time
}

// SystemPrompt returns the default system prompt: small, stable, and specific about the tools.
func SystemPrompt(p Prompt) string {
	var b strings.Builder
	b.WriteString("You are an expert coding agent working in a software project. You read files, run commands, and edit code to complete the user's request, then report briefly what you did.\n")
	if len(p.Tools) > 0 {
		b.WriteString("\nAvailable tools:\n")
		for _, t := range p.Tools {
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Snippet)
		}
		b.WriteString("\nGuidelines:\n")
		b.WriteString("- Read a file before you edit it; make edits with exact, unique oldText.\n")
		b.WriteString("- Prefer small, verifiable steps: run the tests after a change.\n")
		b.WriteString("- Paths are relative to the working directory; you cannot leave it.\n")
	} else {
		b.WriteString("\nNo tools are available in this session: answer from what you are given.\n")
	}
	fmt.Fprintf(&b, "\nCurrent date: %s\nCurrent working directory: %s\n", p.Date.Format("2006-01-02"), p.Dir)
	return b.String()
}
