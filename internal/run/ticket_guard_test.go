package run

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reinhq/rein/internal/command"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/pathrule"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/tool"
)

// renamed is an error whose text says nothing a classifier could read, wrapping a cause.
type renamed struct{ cause error }

func (e renamed) Error() string { return "renamed message" }
func (e renamed) Unwrap() error { return e.cause }

// TestTicketGuardClassifiesByType: the guard names a refused call's blocker by the error's
// type, the tool and the path the call named — a message reworded, or one that only looks
// like a blocker, changes nothing.
func TestTicketGuardClassifiesByType(t *testing.T) {
	dir := t.TempDir()
	call := func(name, args string) *llm.ToolCall {
		return &llm.ToolCall{ID: name + args, Name: name, Arguments: args}
	}
	for _, c := range []struct {
		name string
		role string
		call *llm.ToolCall
		err  error
		want string
	}{
		{"typed unapproved command", RoleWriter, call("run_command", `{"id":"rm"}`), refusal.Errorf(BlockWriterUnapprovedBash, "renamed message"), BlockWriterUnapprovedBash},
		{"unknown approved command", RoleWriter, call("run_command", `{"id":"rm"}`), renamed{refusal.Errorf(command.CodeUnknownCommand, "x")}, BlockWriterUnapprovedBash},
		{"run_command with a command line", RoleWriter, call("run_command", `{"cmd":"ls"}`), &tool.ValidationError{Tool: "run_command"}, BlockWriterUnapprovedBash},
		{"bash not offered", RoleWriter, call("bash", `{"command":"ls"}`), errors.New("renamed message"), BlockWriterUnapprovedBash},
		{"confinement", RoleWriter, call("write", `{"path":"x"}`), renamed{tool.ErrOutsideWorkspace}, BlockWriterPathEscape},
		{"rein's home, climbing out", RoleWriter, call("read", `{"path":"../../auth.json"}`), renamed{&refusal.Error{Code: pathrule.CodeProtectedPath}}, BlockWriterPathEscape},
		{"protected inside the worktree", RoleWriter, call("write", `{"path":".git/config"}`), renamed{&refusal.Error{Code: pathrule.CodeProtectedPath}}, ""},
		{"a failed approved command", RoleWriter, call("run_command", `{"id":"test"}`), renamed{refusal.Errorf(command.CodeCommandFailed, "x")}, ""},
		{"text that only looks like a blocker", RoleWriter, call("read", `{"path":"a.go"}`), fmt.Errorf("%s: outside the workspace", BlockWriterPathEscape), ""},
		{"review writes", RoleReview, call("write", `{"path":"a.go"}`), errors.New("renamed message"), BlockReviewMutation},
		{"review surface", RoleReview, call("read", `{"path":"a.go"}`), renamed{&refusal.Error{Code: policy.CodeReviewMutation}}, BlockReviewMutation},
		{"review reads a missing file", RoleReview, call("read", `{"path":"a.go"}`), errors.New("no such file"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newTicketGuard(c.role)
			g.dir = dir
			if got := g.classify(c.call, c.err); got != c.want {
				t.Errorf("classify = %q, want %q", got, c.want)
			}
		})
	}

	// The context hook puts the code in front of a counted refusal's result once, and leaves
	// a refusal whose text carries its code as it is.
	g := newTicketGuard(RoleWriter)
	g.dir = dir
	g.refused(call("bash", `{}`), errors.New("renamed message"))
	g.refused(call("run_command", `{"id":"rm"}`), refusal.Errorf(BlockWriterUnapprovedBash, "renamed message"))
	msgs := []llm.Message{
		{Role: llm.RoleTool, ToolCallID: "bash{}", IsError: true, Content: []llm.Part{llm.Text("renamed message")}},
		{Role: llm.RoleTool, ToolCallID: `run_command{"id":"rm"}`, IsError: true, Content: []llm.Part{llm.Text(BlockWriterUnapprovedBash + ": renamed message")}},
		{Role: llm.RoleTool, ToolCallID: "other", IsError: true, Content: []llm.Part{llm.Text(BlockWriterPathEscape + ": not counted")}},
	}
	out, err := g.Context(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{BlockWriterUnapprovedBash + ": the call was blocked. renamed message", BlockWriterUnapprovedBash + ": renamed message", BlockWriterPathEscape + ": not counted"}
	for i, m := range out {
		if m.Text() != want[i] {
			t.Errorf("message %d = %q, want %q", i, m.Text(), want[i])
		}
	}
	if c := g.refusals(); len(c) != 1 || c[BlockWriterUnapprovedBash] != 2 {
		t.Errorf("refusals = %v", c)
	}
}
