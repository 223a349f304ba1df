package rpc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/strictjson"
	"github.com/reinhq/rein/internal/wire"
)

// TypeResponse is the type of a response line.
const TypeResponse = "response"

// CommandParse is the command a response to an unreadable line names.
const CommandParse = "parse"

// Response answers one command. Events are the other lines on stdout (package wire); they
// carry no id.
type Response struct {
	V       int    `json:"v"`
	Type    string `json:"type"` // "response"
	ID      string `json:"id,omitempty"`
	Command string `json:"command"`
	Success bool   `json:"success"`
	Data    any    `json:"data,omitempty"`
	Error   string `json:"error,omitempty"`
}

// header is what every command has.
type header struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
}

// The commands' own fields.
type (
	messageCmd struct {
		header
		Message string `json:"message"`
		// StreamingBehavior (prompt only) says what a prompt sent during a run does: "steer"
		// or "follow_up"; without it such a prompt is refused.
		StreamingBehavior string `json:"streamingBehavior,omitempty"`
	}
	plainCmd    struct{ header }
	setModelCmd struct {
		header
		Provider string `json:"provider,omitempty"`
		ModelID  string `json:"modelId"`
	}
	compactCmd struct {
		header
		CustomInstructions string `json:"customInstructions,omitempty"`
	}
	forkCmd struct {
		header
		EntryID string `json:"entryId,omitempty"`
	}
	nameCmd struct {
		header
		Name string `json:"name"`
	}
)

// Response data.
type (
	// ModelData names a model.
	ModelData struct {
		Provider      string `json:"provider"`
		ID            string `json:"id"`
		ContextWindow int    `json:"contextWindow,omitempty"`
	}
	// StateData answers get_state.
	StateData struct {
		Model               *ModelData  `json:"model"`
		IsStreaming         bool        `json:"isStreaming"`
		IsCompacting        bool        `json:"isCompacting"`
		SessionID           string      `json:"sessionId,omitempty"`
		SessionDir          string      `json:"sessionDir,omitempty"`
		SessionName         string      `json:"sessionName,omitempty"`
		MessageCount        int         `json:"messageCount"`
		PendingMessageCount int         `json:"pendingMessageCount"`
		Queue               *wire.Queue `json:"queue"`
	}
	// MessagesData answers get_messages.
	MessagesData struct {
		Messages []*wire.Message `json:"messages"`
	}
	// QueuedData answers a steer or follow_up (or prompt with streamingBehavior) during a run.
	QueuedData struct {
		Queued  string `json:"queued"` // "steer" or "follow_up"
		Pending int    `json:"pending"`
	}
	// StartedData answers a command that started a run.
	StartedData struct {
		Started bool `json:"started"`
	}
	// AbortData answers abort.
	AbortData struct {
		// Aborted says a run or compaction was running and has stopped.
		Aborted bool `json:"aborted"`
		// Discarded counts the queued messages dropped with it.
		Discarded int `json:"discarded,omitempty"`
	}
	// CompactData answers compact.
	CompactData struct {
		Summary          string `json:"summary"`
		FirstKeptEntryID string `json:"firstKeptEntryId,omitempty"`
		MessagesBefore   int    `json:"messagesBefore"`
		MessagesAfter    int    `json:"messagesAfter"`
	}
	// SessionData answers new_session and fork.
	SessionData struct {
		SessionID       string `json:"sessionId,omitempty"`
		SessionDir      string `json:"sessionDir,omitempty"`
		PreviousSession string `json:"previousSessionId,omitempty"`
		ParentSession   string `json:"parentSessionId,omitempty"`
		EntryID         string `json:"entryId,omitempty"`
	}
	// StatsData answers get_session_stats.
	StatsData struct {
		SessionID         string     `json:"sessionId,omitempty"`
		UserMessages      int        `json:"userMessages"`
		AssistantMessages int        `json:"assistantMessages"`
		ToolCalls         int        `json:"toolCalls"`
		ToolResults       int        `json:"toolResults"`
		TotalMessages     int        `json:"totalMessages"`
		Usage             wire.Usage `json:"usage"`
		ContextWindow     int        `json:"contextWindow,omitempty"`
	}
	// TextData answers get_last_assistant_text; Text is null when there is none.
	TextData struct {
		Text *string `json:"text"`
	}
)

// parseHeader reads the id and type of a command line strictly. The id is returned even when
// the rest is wrong, so that the error response can carry it.
func parseHeader(line []byte) (h header, err error) {
	tree, err := strictjson.Decode(string(line))
	if err != nil {
		return h, fmt.Errorf("malformed command: %w", err)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return h, fmt.Errorf("malformed command: want a JSON object")
	}
	if id, ok := obj["id"]; ok {
		s, ok := id.(string)
		if !ok {
			return h, fmt.Errorf("malformed command: id must be a string")
		}
		h.ID = s
	}
	t, ok := obj["type"].(string)
	if !ok || t == "" {
		return h, fmt.Errorf("malformed command: type must be a non-empty string naming the command")
	}
	h.Type = t
	return h, nil
}

// decode reads a whole command strictly into v (unknown fields are errors).
func decode(line []byte, v any) error {
	if err := strictjson.Unmarshal(line, v); err != nil {
		return fmt.Errorf("invalid command: %w", err)
	}
	return nil
}

func knownCommands() string {
	hs := handlerMap()
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
