package contextpack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/llm"
)

// Compaction defaults.
const (
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
	// SummaryResultCap is how much of one tool result the summarizer sees.
	SummaryResultCap = 2000
)

// SummaryPrefix introduces a compaction summary in the context the model sees.
const SummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"

// EstimateTokens estimates one message's tokens as ceil(chars/4), an image counting 4800 chars.
func EstimateTokens(m llm.Message) int {
	chars := 0
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartText, llm.PartThinking:
			chars += len(p.Text)
		case llm.PartImage:
			chars += 4800
		case llm.PartToolCall:
			chars += len(p.Call.Name) + len(p.Call.Arguments)
		}
	}
	return (chars + 3) / 4
}

// ContextTokens estimates the tokens of msgs as a request: the usage the provider reported for
// the last successful assistant message (everything up to and including it), plus estimates
// for the messages after it.
func ContextTokens(msgs []llm.Message) int {
	total, from := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == llm.RoleAssistant && !m.Failed() && m.Usage != nil && m.Usage.Total() > 0 {
			total, from = m.Usage.Total(), i+1
			break
		}
	}
	for _, m := range msgs[from:] {
		total += EstimateTokens(m)
	}
	return total
}

// CutPoint chooses where to cut msgs so that about keepRecent tokens stay: it returns the index
// of the first kept message (never a tool result) and the start of the turn that index falls
// in (the nearest user message at or before it). cut is -1 when there is nothing to summarize.
func CutPoint(msgs []llm.Message, keepRecent int) (cut, turnStart int) {
	sum, cut := 0, -1
	for i := len(msgs) - 1; i >= 0; i-- {
		sum += EstimateTokens(msgs[i])
		if sum >= keepRecent {
			cut = i
			break
		}
	}
	if cut < 0 {
		return -1, -1
	}
	for cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut++ // never keep a tool result without the call it answers
	}
	if cut >= len(msgs) {
		// Only tool results remain after the mark: cut at the last valid point before it.
		for cut = len(msgs) - 1; cut > 0 && msgs[cut].Role == llm.RoleTool; cut-- {
		}
	}
	if cut <= 0 {
		return -1, -1
	}
	turnStart = cut
	for turnStart > 0 && msgs[turnStart].Role != llm.RoleUser {
		turnStart--
	}
	if msgs[turnStart].Role != llm.RoleUser {
		turnStart = cut
	}
	return cut, turnStart
}

// Serialize renders messages as plain text for the summarizer, so that it reads a transcript
// instead of continuing a conversation. Tool results are capped at SummaryResultCap bytes.
func Serialize(msgs []llm.Message) string {
	var parts []string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			parts = append(parts, "[User]: "+m.Text())
		case llm.RoleAssistant:
			var calls []string
			for _, p := range m.Content {
				switch p.Type {
				case llm.PartThinking:
					parts = append(parts, "[Assistant thinking]: "+p.Text)
				case llm.PartText:
					parts = append(parts, "[Assistant]: "+p.Text)
				case llm.PartToolCall:
					calls = append(calls, fmt.Sprintf("%s(%s)", p.Call.Name, p.Call.Arguments))
				}
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case llm.RoleTool:
			text := m.Text()
			if len(text) > SummaryResultCap {
				text = fmt.Sprintf("%s\n\n[... %d more characters truncated]", text[:SummaryResultCap], len(text)-SummaryResultCap)
			}
			parts = append(parts, "[Tool result]: "+text)
		}
	}
	return strings.Join(parts, "\n\n")
}

const summarySystem = "You are a context summarization assistant. You read a transcript of a coding agent's conversation and write a structured summary that another agent will continue from. Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."

const summaryInstructions = `Write a structured summary of the conversation above with exactly these sections:

## Goal
## Constraints & Preferences
## Progress
### Done
### In Progress
### Blocked
## Key Decisions
## Next Steps
## Critical Context

If a previous summary is given, update it: keep what still holds, move finished work to Done, and update Next Steps. Keep each section concise. Preserve exact file paths, function names, and error messages.`

const turnPrefixInstructions = `The transcript above is the beginning of one long turn whose end is kept verbatim. Summarize it with exactly these sections:

## Original Request
## Early Progress
## Context for Suffix

Keep it concise. Preserve exact file paths, function names, and error messages.`

// Compacted is the outcome of [Compact].
type Compacted struct {
	// Summary is the structured summary (with the touched-files lists appended).
	Summary string
	// FirstKept is the index of the first message kept verbatim.
	FirstKept int
	// TokensBefore is the estimated context size before compaction.
	TokensBefore int
	// Usage sums the summarization requests.
	Usage llm.Usage
}

// Message returns the user message that replaces the summarized history.
func (c *Compacted) Message() llm.Message {
	return llm.UserText(SummaryPrefix + c.Summary + "\n</summary>")
}

// ErrNothingToCompact says the context is too small to cut.
var ErrNothingToCompact = errors.New("nothing to compact: the conversation is shorter than the part kept verbatim")

// Compact summarizes msgs[:cut] with model, where cut keeps about keepRecent tokens. A cut in
// the middle of a turn (a split turn) summarizes the history before the turn and the turn's
// beginning separately and merges them. reserve bounds the summary's length (0.8 × reserve).
// instructions, if not empty, adds a focus for the summary.
func Compact(ctx context.Context, model llm.Model, msgs []llm.Message, keepRecent, reserve int, instructions string) (*Compacted, error) {
	cut, turnStart := CutPoint(msgs, keepRecent)
	if cut <= 0 {
		return nil, ErrNothingToCompact
	}
	out := &Compacted{FirstKept: cut, TokensBefore: ContextTokens(msgs)}
	history := msgs[:turnStart]
	summary := "No prior history."
	if len(history) > 0 {
		s, err := summarize(ctx, model, history, summaryInstructions, instructions, reserve*4/5, &out.Usage)
		if err != nil {
			return nil, err
		}
		summary = s
	}
	if turnStart < cut {
		prefix, err := summarize(ctx, model, msgs[turnStart:cut], turnPrefixInstructions, instructions, reserve/2, &out.Usage)
		if err != nil {
			return nil, err
		}
		summary += "\n\n---\n\n**Turn Context (split turn):**\n\n" + prefix
	}
	out.Summary = summary + fileLists(msgs[:cut])
	return out, nil
}

func summarize(ctx context.Context, model llm.Model, msgs []llm.Message, task, focus string, maxTokens int, usage *llm.Usage) (string, error) {
	prompt := "<conversation>\n" + Serialize(msgs) + "\n</conversation>\n\n" + task
	if focus != "" {
		prompt += "\n\nAdditional focus: " + focus
	}
	req := &llm.Request{System: summarySystem, Messages: []llm.Message{llm.UserText(prompt)}, MaxTokens: maxTokens}
	m := model.Stream(ctx, req, func(llm.Event) {})
	if m.Usage != nil {
		usage.Add(*m.Usage)
	}
	if m.Failed() {
		if m.Err != nil {
			return "", fmt.Errorf("summarizing the conversation: %w", m.Err)
		}
		return "", fmt.Errorf("summarizing the conversation failed (%s)", m.StopReason)
	}
	text := strings.TrimSpace(m.Text())
	if text == "" {
		return "", fmt.Errorf("summarizing the conversation: the model returned no summary")
	}
	return text, nil
}

// fileLists appends the files read and modified by the summarized tool calls, so paths survive
// the summary exactly.
func fileLists(msgs []llm.Message) string {
	read, modified := map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			var args struct {
				Path string `json:"path"`
			}
			if json.Unmarshal([]byte(c.Arguments), &args) != nil || args.Path == "" {
				continue
			}
			switch c.Name {
			case "read":
				read[args.Path] = true
			case "write", "edit":
				modified[args.Path] = true
			}
		}
	}
	for p := range modified {
		delete(read, p)
	}
	var b strings.Builder
	for _, s := range []struct {
		tag   string
		paths map[string]bool
	}{{"read-files", read}, {"modified-files", modified}} {
		if len(s.paths) == 0 {
			continue
		}
		list := make([]string, 0, len(s.paths))
		for p := range s.paths {
			list = append(list, p)
		}
		sort.Strings(list)
		fmt.Fprintf(&b, "\n\n<%s>\n%s\n</%s>", s.tag, strings.Join(list, "\n"), s.tag)
	}
	return b.String()
}

// Compactor decides when a context must be compacted and does it, with the settings of one
// model: compaction is due when the context exceeds ContextWindow − Reserve tokens.
type Compactor struct {
	Model         llm.Model
	ContextWindow int
	Reserve       int // default DefaultReserveTokens
	KeepRecent    int // default DefaultKeepRecentTokens
}

func (c *Compactor) reserve() int {
	if c.Reserve > 0 {
		return c.Reserve
	}
	return DefaultReserveTokens
}

func (c *Compactor) keep() int {
	if c.KeepRecent > 0 {
		return c.KeepRecent
	}
	return DefaultKeepRecentTokens
}

// Needed reports whether msgs exceed the window minus the reserve.
func (c *Compactor) Needed(msgs []llm.Message) bool {
	return c.ContextWindow > 0 && ContextTokens(msgs) > c.ContextWindow-c.reserve()
}

// Cut returns the index of the first message a compaction of msgs would keep verbatim (0 when
// there is nothing to compact). It implements kernel.Cutter.
func (c *Compactor) Cut(msgs []llm.Message) int {
	cut, _ := CutPoint(msgs, c.keep())
	return cut
}

// Compact summarizes the older part of msgs (see [Compact]) and returns the summary message,
// the index of the first message kept, the tokens before and the summarization usage. It
// implements kernel.Compactor.
func (c *Compactor) Compact(ctx context.Context, msgs []llm.Message, instructions string) (llm.Message, int, int, llm.Usage, error) {
	out, err := Compact(ctx, c.Model, msgs, c.keep(), c.reserve(), instructions)
	if err != nil {
		return llm.Message{}, 0, 0, llm.Usage{}, err
	}
	return out.Message(), out.FirstKept, out.TokensBefore, out.Usage, nil
}
