package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/wire"
)

// Attacher attaches what a prompt's @path mentions name when the prompt is sent; a [Host]
// may implement it (package cli does: the read and ls tools over the runtime's workspace,
// so confinement and the permission rules are those of every read). Without it a mention
// is only text.
type Attacher interface {
	// Attach returns the attachments for the mentions of text, in order, and one notice for
	// each mention refused or skipped (outside the workspace, denied, missing).
	Attach(ctx context.Context, rt Runtime, text string) ([]Attachment, []string)
}

// Attachment is what one mention attached.
type Attachment struct {
	// Path is the workspace-relative path the mention named.
	Path string
	// Kind is "file", "directory" or "binary" (named, not inlined).
	Kind string
	// Text is the file's text, the directory's entries, or what a binary file is.
	Text string
	// Summary is one line for the transcript ("12 lines", "4 entries", "binary, 3.1 KB").
	Summary string
}

// attachmentOpen starts an attachment's text part; the transcript shows such a part as one
// line.
const attachmentOpen = "<attachment "

// part is the attachment as the user message carries it (and the session records it).
func (a Attachment) part() llm.Part {
	return llm.Text(fmt.Sprintf("%spath=%q kind=%q summary=%q>\n%s\n</attachment>", attachmentOpen, a.Path, a.Kind, a.Summary, strings.TrimRight(a.Text, "\n")))
}

// attachmentLine is the transcript's line for an attachment part's text ("" when text is
// not one).
func attachmentLine(text string) string {
	if !strings.HasPrefix(text, attachmentOpen) {
		return ""
	}
	head, _, _ := strings.Cut(text, "\n")
	var path, kind, summary string
	if _, err := fmt.Sscanf(strings.TrimPrefix(head, attachmentOpen), "path=%q kind=%q summary=%q>", &path, &kind, &summary); err != nil {
		return "attached: " + head
	}
	return fmt.Sprintf("attached @%s (%s)", path, summary)
}

// prompt is the user message for text: the text as typed, then what its mentions attach;
// the notices of refused mentions are shown.
func (m *Model) prompt(text string) llm.Message {
	msg := llm.UserText(text)
	at, ok := m.e.host.(Attacher)
	rt := m.e.runtime()
	if !ok || rt == nil || !strings.Contains(text, "@") {
		return msg
	}
	atts, notices := at.Attach(m.ctx, rt, text)
	for _, n := range notices {
		m.t.add(newNotice(n, "warn"))
	}
	for _, a := range atts {
		msg.Content = append(msg.Content, a.part())
	}
	return msg
}

// typed is the text the user typed of a user message: its first text part (the rest are
// attachments).
func typed(msg llm.Message) string {
	for _, p := range msg.Content {
		if p.Type == llm.PartText {
			return p.Text
		}
	}
	return ""
}

// userText is what the transcript shows of a user message: the typed text, then one line
// per attachment.
func userText(m *wire.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type != "text" {
			continue
		}
		if line := attachmentLine(p.Text); line != "" {
			b.WriteString("\n" + line)
			continue
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
