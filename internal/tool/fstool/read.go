package fstool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

// MaxImageBytes is the largest image read returns; bigger images are refused with advice.
const MaxImageBytes = 5 << 20

// sniffLen is how much of a file read inspects to tell text, images and other binaries apart.
const sniffLen = 8192

type readArgs struct {
	Path   string `json:"path" jsonschema:"Path of the file to read, relative to the workspace (or absolute inside it)"`
	Offset *int   `json:"offset,omitempty" jsonschema:"Line number to start reading from (1-based)"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"Maximum number of lines to read"`
}

// ReadDetails is the Details of a read result.
type ReadDetails struct {
	// Truncation is set when the output was cut at the line or byte limit.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
	// MIMEType is set for an image.
	MIMEType string `json:"mimeType,omitempty"`
}

type readTool struct{ ws *tool.Workspace }

// Read returns the read tool: the text of a file (a line range of it, head-truncated to
// [tool.MaxLines] lines / [tool.MaxBytes] bytes without cutting a line, with a notice saying
// how to continue), or an image part for PNG, JPEG, GIF and WebP files. Other binary files are
// refused. The file lies in the workspace, or in one of its read-only directories
// ([tool.Workspace.ReadOnly]: skill directories), named by its absolute path. Replay: safe.
func Read(ws *tool.Workspace) tool.Tool { return &readTool{ws: ws} }

// readSchema is the JSON Schema of readArgs, written out rather than built by reflection at
// start-up; TestSchemasMatchArgs checks it against tool.SchemaFor[readArgs].
const readSchema = `{"type":"object","properties":{"path":{"type":"string","description":"Path of the file to read, relative to the workspace (or absolute inside it)"},"offset":{"type":["null","integer"],"description":"Line number to start reading from (1-based)","minimum":1},"limit":{"type":["null","integer"],"description":"Maximum number of lines to read","minimum":1}},"required":["path"],"additionalProperties":false}`

func (t *readTool) Spec() tool.Spec {
	return tool.Spec{
		Name: "read",
		Description: "Read the contents of a file. Text comes back as is, at most " + tool.MaxLinesText + " lines or " + tool.MaxBytesText + " " +
			"(whichever comes first); when the output is cut, a note at the end gives the offset to continue from. " +
			"Use offset (1-based line number) and limit (number of lines) to read part of a large file. " +
			"PNG, JPEG, GIF and WebP images come back as images. Other binary files are refused.",
		Snippet: "Read a file's contents (text by line range, or an image)",
		Brief:   "Read a file: text (at most " + tool.MaxLinesText + " lines or " + tool.MaxBytesText + " a call; offset: first line, 1-based; limit: lines) or an image.",
		Schema:  json.RawMessage(readSchema),
		Replay:  tool.ReplaySafe,
		Local:   true,
	}
}

func (t *readTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a readArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, err
	}
	ws, rel, err := inView(t.ws, a.Path, true)
	if err != nil {
		return tool.Result{}, err
	}
	f, st, err := openRead(ws, rel, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tool.Result{}, fsError(a.Path, err)
	}
	head = head[:n]
	mime := http.DetectContentType(head)
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return readImage(a.Path, mime, head, f, st.Size())
	}
	if isBinary(head, mime) {
		return tool.Result{}, fmt.Errorf("%s is a binary file (%s, %s); read returns text and PNG/JPEG/GIF/WebP images only. "+
			"Inspect it with bash instead (for example: file, xxd | head, strings)", a.Path, mime, tool.FormatSize(int(st.Size())))
	}
	if n < sniffLen {
		// The whole file is in head: no buffer of its own for the lines.
		return readText(ctx, a, bytes.NewReader(head), int64(n))
	}
	return readText(ctx, a, io.MultiReader(bytes.NewReader(head), f), st.Size())
}

// openRead opens the regular file rel for reading: its symbolic links are resolved first,
// the resolved path is opened without following a final link (and without blocking on a
// FIFO), and the workspace's Guard judges that path with the link count read from the open
// descriptor, so the file judged is the file read.
func openRead(ws *tool.Workspace, rel, shown string) (*os.File, fs.FileInfo, error) {
	if err := checkFile(ws, rel, shown); err != nil {
		return nil, nil, err
	}
	real, err := realPath(ws, rel, shown)
	if err != nil {
		return nil, nil, err
	}
	f, err := ws.Root.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("%s became a symbolic link while it was being read; try again", shown)
		}
		return nil, nil, fsError(shown, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s); the file tools only handle regular files", shown, st.Mode().Type())
	} else if err != nil {
		err = fsError(shown, err)
	}
	if err == nil {
		err = guardRead(ws, real, rel, linkCount(st))
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

func isBinary(head []byte, mime string) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/", "application/pdf", "application/zip",
		"application/x-gzip", "application/x-rar-compressed", "application/wasm", "application/ogg", "application/vnd.ms-fontobject"} {
		if strings.HasPrefix(mime, p) {
			return true
		}
	}
	return false
}

func readImage(path, mime string, head []byte, r io.Reader, size int64) (tool.Result, error) {
	if size > MaxImageBytes {
		return tool.Result{}, fmt.Errorf("%s is a %s image of %s, larger than the %s read returns; "+
			"make a smaller copy with bash first (for example with ImageMagick: convert in.png -resize 2000x2000 out.png)",
			path, mime, tool.FormatSize(int(size)), tool.FormatSize(MaxImageBytes))
	}
	rest, err := io.ReadAll(io.LimitReader(r, MaxImageBytes+1-int64(len(head))))
	if err != nil {
		return tool.Result{}, fsError(path, err)
	}
	data := append(head, rest...)
	return tool.Result{
		Content: []llm.Part{
			llm.Text(fmt.Sprintf("Read image file [%s]", mime)),
			{Type: llm.PartImage, MIMEType: mime, Data: data},
		},
		Details: ReadDetails{MIMEType: mime},
	}, nil
}

// readText streams the file once: it counts every line and keeps only the selected lines
// needed to fill the output (each capped just past the byte limit), so a huge file costs
// memory proportional to the output, not to the file.
//
// Lines are separated by "\n"; a final newline ends the last line rather than starting an
// empty one. A "\r" before the "\n" is not shown (edit matches CRLF files by their LF form).
func readText(ctx context.Context, a readArgs, r io.Reader, size int64) (tool.Result, error) {
	start, end := 0, int(^uint(0)>>1)
	if a.Offset != nil {
		start = *a.Offset - 1
	}
	if a.Limit != nil {
		end = start + *a.Limit
	}
	const lineCap = tool.MaxBytes + 1
	var (
		total      int      // lines in the file
		sel        []string // collected selected lines
		collected  int      // bytes of sel joined by "\n"
		collecting = true
		selLines   int // selected lines (all, not only collected)
		selBytes   int
		firstLen   = -1 // full length of the first selected line
		cur        []byte
		curLen     int
		inLine     bool
	)
	emit := func() {
		idx := total
		total++
		if idx >= start && idx < end {
			if selLines > 0 {
				selBytes++
			}
			selBytes += curLen
			selLines++
			if firstLen < 0 {
				firstLen = curLen
			}
			if collecting {
				line := strings.ToValidUTF8(strings.TrimSuffix(string(cur), "\r"), "\uFFFD")
				if len(sel) > 0 {
					collected++
				}
				collected += len(line)
				sel = append(sel, line)
				if len(sel) > tool.MaxLines || collected > tool.MaxBytes {
					collecting = false
				}
			}
		}
		cur, curLen, inLine = cur[:0], 0, false
	}
	// The line reader's buffer: 64 KB, or what the file's size needs (every read of a small
	// file allocated 64 KB before, the largest garbage of a turn).
	br := bufio.NewReaderSize(r, int(min(max(size+1, 512), 64<<10)))
	for chunks := 0; ; chunks++ {
		if chunks%256 == 0 && ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			inLine = true
			data, nl := bytes.CutSuffix(chunk, []byte{'\n'})
			curLen += len(data)
			if collecting && total >= start && total < end && len(cur) < lineCap {
				cur = append(cur, data[:min(len(data), lineCap-len(cur))]...)
			}
			if nl {
				emit()
			}
		}
		if err == nil || errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		return tool.Result{}, fsError(a.Path, err)
	}
	if inLine {
		emit()
	}
	if start > 0 && start >= total {
		return tool.Result{}, fmt.Errorf("Offset %d is beyond end of file (%d lines total)", start+1, total)
	}
	if total == 0 {
		return tool.TextResult("(empty file)"), nil
	}
	tr := tool.TruncateHeadLines(sel, tool.MaxLines, tool.MaxBytes)
	tr.TotalLines, tr.TotalBytes = selLines, selBytes
	first := start + 1
	var text string
	switch {
	case tr.FirstLineExceedsLimit:
		text = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			first, tool.FormatSize(firstLen), tool.FormatSize(tool.MaxBytes), first, a.Path, tool.MaxBytes)
	case tr.Truncated:
		last := first + tr.OutputLines - 1
		limitNote := ""
		if tr.By == tool.TruncatedByBytes {
			limitNote = fmt.Sprintf(" (%s limit)", tool.FormatSize(tool.MaxBytes))
		}
		text = fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]", tr.Content, first, last, total, limitNote, last+1)
	case a.Limit != nil && start+selLines < total:
		next := start + selLines + 1
		text = fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", tr.Content, total-(start+selLines), next)
	default:
		text = tr.Content
	}
	res := tool.TextResult(text)
	if tr.Truncated {
		res.Details = ReadDetails{Truncation: &tr}
	}
	return res, nil
}
