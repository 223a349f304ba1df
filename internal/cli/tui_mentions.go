package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/refusal"
	"github.com/reinhq/rein/internal/system"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tui"
)

// uiHost implements tui.Attacher: what a prompt's @path mentions attach.
var _ tui.Attacher = (*uiHost)(nil)

// maxAttachments bounds the mentions one prompt attaches.
const maxAttachments = 20

// Attach reads each @path that text mentions (as CLAUDE.md imports are read:
// contextpack.Mentions) through the read and ls tools over rt's workspace, so a mention
// reaches no more than a read call would: confined to the workspace (and its read-only
// skill directories), symbolic links resolved, the permission rules' read denials (and
// protected reads) in force through the workspace's Guard. The user named the path, so an
// "ask" read rule does not hold it, as an approved call would not be. A file's text is
// capped as one read call is (tool.MaxLines lines or tool.MaxBytes, with the note saying
// how to continue); a directory lists its entries as ls does; a binary file (images too) is
// named, not inlined. A mention that names nothing and does not look like a path (@alice)
// is text.
func (h *uiHost) Attach(ctx context.Context, rt tui.Runtime, text string) ([]tui.Attachment, []string) {
	srt, ok := rt.(*system.Runtime)
	if !ok || srt.Workspace == nil {
		return nil, nil
	}
	return attachMentions(ctx, srt.Workspace, text)
}

func attachMentions(ctx context.Context, ws *tool.Workspace, text string) ([]tui.Attachment, []string) {
	var (
		out     []tui.Attachment
		notices []string
		seen    = map[string]bool{}
	)
	for _, ref := range contextpack.Mentions(text) {
		rel, ref, err := mentionPath(ws, ref)
		switch {
		case err != nil:
			notices = append(notices, fmt.Sprintf("@%s not attached: %s", ref, err.Error()))
			continue
		case rel == "" || seen[rel]:
			continue
		case len(out) == maxAttachments:
			notices = append(notices, fmt.Sprintf("@%s not attached: a prompt attaches at most %d mentions", ref, maxAttachments))
			continue
		}
		seen[rel] = true
		a, err := attach(ctx, ws, rel)
		if err != nil {
			notices = append(notices, fmt.Sprintf("@%s not attached: %s", ref, err.Error()))
			continue
		}
		out = append(out, a)
	}
	return out, notices
}

// mentionPath resolves a mention to a workspace-relative path: as written, else without
// trailing punctuation ("see @notes.md."). rel is "" for a mention that names nothing and
// does not look like a path; err says why one that does cannot be attached.
func mentionPath(ws *tool.Workspace, ref string) (rel, shown string, err error) {
	for _, cand := range []string{ref, strings.TrimRight(ref, ".,;:!?)]}'\"")} {
		if cand == "" {
			continue
		}
		r, err := ws.Rel(cand)
		if err != nil {
			if errors.Is(err, tool.ErrOutsideWorkspace) {
				return "", cand, errors.New("it is outside the workspace")
			}
			return "", cand, err
		}
		if _, err := ws.Root.Stat(r); err == nil {
			return r, cand, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", cand, fmt.Errorf("%s cannot be read: %w", cand, err)
		}
	}
	if strings.ContainsAny(ref, "/.") {
		return "", ref, errors.New("no such file or directory in the workspace")
	}
	return "", ref, nil
}

// attach reads rel (which exists) with the ls or the read tool.
func attach(ctx context.Context, ws *tool.Workspace, rel string) (tui.Attachment, error) {
	fi, err := ws.Root.Stat(rel)
	if err != nil {
		return tui.Attachment{}, err
	}
	args, err := json.Marshal(map[string]string{"path": rel})
	if err != nil {
		return tui.Attachment{}, err
	}
	if fi.IsDir() {
		res, err := fstool.Ls(ws).Run(ctx, tool.Call{Args: args})
		if err != nil {
			return tui.Attachment{}, err
		}
		listing := resultText(res)
		n := 0
		if strings.TrimSpace(listing) != "" {
			n = strings.Count(strings.TrimRight(listing, "\n"), "\n") + 1
		}
		return tui.Attachment{Path: rel, Kind: "directory", Text: listing, Summary: fmt.Sprintf("directory, %d entries", n)}, nil
	}
	res, err := fstool.Read(ws).Run(ctx, tool.Call{Args: args})
	if err == nil && !hasImage(res) {
		body := resultText(res)
		return tui.Attachment{Path: rel, Kind: "file", Text: body, Summary: fmt.Sprintf("%d lines, %s", lines(body), tool.FormatSize(len(body)))}, nil
	}
	var ref *refusal.Error
	if err != nil && (errors.As(err, &ref) || errors.Is(err, tool.ErrOutsideWorkspace) || !binaryFile(ws, rel)) {
		return tui.Attachment{}, err
	}
	what := fmt.Sprintf("binary file, %s, not inlined", tool.FormatSize(int(fi.Size())))
	return tui.Attachment{Path: rel, Kind: "binary", Text: fmt.Sprintf("%s is a %s: read it with the tools if it matters", rel, what), Summary: what}, nil
}

func resultText(res tool.Result) string {
	var b strings.Builder
	for _, p := range res.Content {
		if p.Type == llm.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func hasImage(res tool.Result) bool {
	for _, p := range res.Content {
		if p.Type == llm.PartImage {
			return true
		}
	}
	return false
}

func lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
}

// binaryFile says whether the file rel starts with something that is not UTF-8 text (the
// read tool refused it for that, rather than for its rules).
func binaryFile(ws *tool.Workspace, rel string) bool {
	f, err := ws.Root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head))
}

// trimPartialRune drops a rune cut at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
