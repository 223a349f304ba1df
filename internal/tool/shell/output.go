package shell

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/tool"
)

const noOutput = "(no output)"

// output accumulates a command's merged output in a [proc.Tail] of 2 × [tool.MaxBytes]:
// until the output exceeds the limits the tail holds all of it; from then on everything is
// also written to a spill file, and the tail is enough for [tool.TruncateTail] to cut
// exactly.
type output struct {
	mu      sync.Mutex
	tempDir string
	update  func(tool.Result)

	tail     *proc.Tail // everything, or the rolling tail once spilled
	newlines int        // '\n' seen
	lineLen  int        // bytes of the line in progress (after the last '\n')
	prevLen  int        // bytes of the last completed line

	file     *os.File
	path     string
	spillErr error

	lastUpdate time.Time
}

func newOutput(tempDir string, update func(tool.Result)) *output {
	return &output{tempDir: tempDir, update: update, tail: proc.NewTail(2 * tool.MaxBytes)}
}

// Write is called by exec's copying goroutine, one call at a time.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	total := int(o.tail.Total()) + len(p)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		n := bytes.Count(p, []byte{'\n'})
		o.newlines += n
		if n == 1 {
			o.prevLen = o.lineLen + i
		} else {
			j := bytes.LastIndexByte(p[:i], '\n')
			o.prevLen = i - j - 1
		}
		o.lineLen = len(p) - i - 1
	} else {
		o.lineLen += len(p)
	}
	if o.file == nil && o.spillErr == nil && o.exceedsAt(total) {
		// Not exceeded before: the tail still holds everything written so far.
		o.spill(p)
	} else if o.file != nil {
		if _, err := o.file.Write(p); err != nil {
			o.spillErr = err
			o.file.Close()
			os.Remove(o.path)
			o.file, o.path = nil, ""
		}
	}
	o.tail.Write(p)
	if o.update != nil && time.Since(o.lastUpdate) >= updateEvery {
		o.lastUpdate = time.Now()
		text, d := o.snapshot()
		o.update(tool.Result{Content: tool.TextResult(text).Content, Details: d})
	}
	return len(p), nil
}

// lines counts lines under the rule of [tool.Truncation]: a final "\n" ends the last line.
func (o *output) lines() int {
	if o.lineLen > 0 {
		return o.newlines + 1
	}
	return o.newlines
}

func (o *output) exceeds() bool { return o.exceedsAt(int(o.tail.Total())) }

// exceedsAt reports whether total bytes (with the line counts so far) exceed the limits.
func (o *output) exceedsAt(total int) bool {
	body := total
	if o.lineLen == 0 && total > 0 {
		body-- // the final newline does not count
	}
	return o.lines() > tool.MaxLines || body > tool.MaxBytes
}

// spill starts the spill file with the output so far and p, not yet written to the tail.
func (o *output) spill(p []byte) {
	if o.tempDir != "" {
		// The caller's directory may not exist until the first output spills.
		if err := os.MkdirAll(o.tempDir, 0o700); err != nil {
			o.spillErr = err
			return
		}
	}
	f, err := os.CreateTemp(o.tempDir, "rein-bash-*.log")
	if err != nil {
		o.spillErr = err
		return
	}
	if _, err := f.Write(append(o.tail.Bytes(), p...)); err != nil {
		o.spillErr = err
		f.Close()
		os.Remove(f.Name())
		return
	}
	o.file, o.path = f, f.Name()
}

// snapshot renders the output so far: the tail that fits the limits plus, when something was
// cut, a notice.
func (o *output) snapshot() (string, *Details) {
	d := &Details{}
	tr := tool.TruncateTail(string(o.tail.Bytes()), tool.MaxLines, tool.MaxBytes)
	text := strings.TrimRight(tr.Content, "\n")
	if !tr.Truncated && !o.tail.Truncated() {
		if text == "" {
			text = noOutput
		}
		return text, d
	}
	// Counts come from the whole output, not the kept buffer.
	tr.TotalLines, tr.TotalBytes = o.lines(), int(o.tail.Total())
	tr.Truncated = true
	if tr.By == "" {
		tr.By = tool.TruncatedByBytes
	}
	d.Truncation = &tr
	d.FullOutputPath = o.path
	where := ""
	if o.path != "" {
		where = " Full output: " + o.path
	} else if o.spillErr != nil {
		where = " Full output unavailable: " + o.spillErr.Error()
	}
	end := tr.TotalLines
	start := end - tr.OutputLines + 1
	var notice string
	switch {
	case tr.LastLinePartial:
		last := o.lineLen
		if last == 0 {
			last = o.prevLen
		}
		notice = fmt.Sprintf("[Showing last %s of line %d (line is %s).%s]", tool.FormatSize(len(strings.TrimRight(tr.Content, "\n"))), end, tool.FormatSize(last), where)
	case tr.By == tool.TruncatedByLines:
		notice = fmt.Sprintf("[Showing lines %d-%d of %d.%s]", start, end, end, where)
	default:
		notice = fmt.Sprintf("[Showing lines %d-%d of %d (%s limit).%s]", start, end, end, tool.FormatSize(tool.MaxBytes), where)
	}
	if text == "" {
		return notice, d
	}
	return text + "\n\n" + notice, d
}

// result returns the final text and details. It must be called after the command's output is
// complete (cmd.Wait returned).
func (o *output) result() (string, *Details) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.spillErr == nil {
			o.spillErr = err
		}
		o.file = nil
		if !o.tail.Truncated() && !o.exceeds() {
			// Spilled on a boundary the final cut does not need (a trailing newline).
			os.Remove(o.path)
			o.path = ""
		}
	}
	o.update = nil
	return o.snapshot()
}

// close releases the spill file if result was never called.
func (o *output) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		o.file.Close()
		o.file = nil
	}
	o.update = nil
}
