package grep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/proc"
)

// ripgrep runs the rg binary.
type ripgrep struct{ bin string }

// NewRipgrep returns the backend that runs the rg binary at bin ("" looks rg up on PATH when
// searching).
func NewRipgrep(bin string) Backend { return &ripgrep{bin: bin} }

// LookRipgrep returns the ripgrep backend when rg is on PATH.
func LookRipgrep() (Backend, bool) {
	p, err := exec.LookPath("rg")
	if err != nil {
		return nil, false
	}
	return &ripgrep{bin: p}, true
}

func (r *ripgrep) Name() string { return "rg" }

// rgType names the file type that carries a name-only glob.
const rgType = "reinglob"

func (r *ripgrep) args(q Query) ([]string, error) {
	args := []string{
		"--json", "--line-number", "--color=never", "--hidden",
		"--no-config",     // no RIPGREP_CONFIG_PATH surprises (smart case, extra globs)
		"--no-ignore-dot", // .ignore and .rgignore are ripgrep's own; git rules only
		"--sort", "path",  // deterministic order, the one the native backend produces
		"--glob", "!.git",
	}
	if q.IgnoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.Literal {
		args = append(args, "--fixed-strings")
	}
	g, err := parseGlob(q.Glob)
	if err != nil {
		return nil, err
	}
	// A --glob would override .gitignore (ripgrep's whitelist semantics); a file type only
	// narrows, so a name-only glob goes in as a type. Anything else is left to the tool's
	// filter.
	if g.nameOnly() {
		args = append(args, "--type-add", rgType+":"+g.pattern)
		if g.negate {
			args = append(args, "--type-not", rgType)
		} else {
			args = append(args, "--type", rgType)
		}
	}
	return append(args, "--regexp", q.Pattern, "--", q.Path), nil
}

type rgEvent struct {
	Type string `json:"type"`
	Data struct {
		Path struct {
			Text  *string `json:"text"`
			Bytes string  `json:"bytes"`
		} `json:"path"`
		LineNumber int `json:"line_number"`
	} `json:"data"`
}

var matchPrefix = []byte(`{"type":"match"`)

func (r *ripgrep) Search(ctx context.Context, q Query, found func(Match) bool) error {
	bin := r.bin
	if bin == "" {
		p, err := exec.LookPath("rg")
		if err != nil {
			return fmt.Errorf("ripgrep: %w", err)
		}
		bin = p
	}
	args, err := r.args(q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stderr bytes.Buffer
	stdout, wait := startRipgrep(ctx, bin, args, q.Dir, &capped{buf: &stderr, max: 4096})
	rd := bufio.NewReaderSize(stdout, 64<<10)
	stopped, summary := false, false
	var parseErr error
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			if bytes.HasPrefix(line, matchPrefix) {
				var ev rgEvent
				if err := json.Unmarshal(line, &ev); err != nil {
					parseErr = fmt.Errorf("ripgrep: unreadable output: %w", err)
					break
				}
				p := ev.Data.Path.Bytes
				if ev.Data.Path.Text != nil {
					p = *ev.Data.Path.Text
				} else if b, err := base64.StdEncoding.DecodeString(p); err == nil {
					p = string(b)
				}
				if !found(Match{Path: strings.TrimPrefix(p, "./"), Line: ev.Data.LineNumber}) {
					stopped = true
					break
				}
			} else if bytes.Contains(line, []byte(`"type":"summary"`)) {
				summary = true
			}
		}
		if err != nil {
			if err != io.EOF {
				parseErr = fmt.Errorf("ripgrep: read output: %w", err)
			}
			break
		}
	}
	if stopped || parseErr != nil {
		cancel()
		stdout.CloseWithError(errStopped)
		wait()
		if stopped {
			return nil
		}
		return parseErr
	}
	res := wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch {
	case res.Outcome == proc.Exited && res.Code == 0:
		return nil
	case res.Outcome == proc.Exited && res.Code == 1:
		return nil // no match
	case res.Outcome == proc.Exited && res.Code == 2 && summary:
		// Some files could not be read; the search itself ran, as the native backend's does.
		return nil
	case res.Outcome == proc.Exited && res.Code == 2:
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "regex") {
			return fmt.Errorf("%w: %s", ErrPattern, msg)
		}
		return fmt.Errorf("ripgrep: %s", msg)
	case res.Outcome == proc.StartFailed:
		return fmt.Errorf("ripgrep: %w", res.Err)
	default:
		return fmt.Errorf("ripgrep: %s: %s", res, strings.TrimSpace(stderr.String()))
	}
}

// errStopped closes rg's output once the caller has what it wanted.
var errStopped = errors.New("ripgrep: search stopped")

// startRipgrep runs rg through the process runner and streams its stdout: the returned reader
// yields the output as rg writes it, and wait returns how rg ended (once the reader is read to
// its end or closed).
func startRipgrep(ctx context.Context, bin string, args []string, dir string, stderr io.Writer) (*io.PipeReader, func() proc.Result) {
	pr, pw := io.Pipe()
	done := make(chan proc.Result, 1)
	go func() {
		res := proc.Run(ctx, proc.Spec{Path: bin, Args: append([]string{bin}, args...), Dir: dir,
			Stdout: pw, Stderr: stderr, WaitDelay: time.Second})
		pw.Close()
		done <- res
	}()
	return pr, func() proc.Result { return <-done }
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf *bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
