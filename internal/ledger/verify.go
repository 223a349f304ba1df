package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// TornTail describes what a crash left after the last valid record: an incomplete record (no
// newline, unparseable, or no trailer), possibly followed by zero fill, and no complete record
// but ones written while that record was not yet durable (a hole a power loss left in the
// writer's unsynced window).
type TornTail struct {
	Offset   int64  // end of the last valid record, where the torn bytes start
	Bytes    int64  // bytes from Offset to the end of the file, zero fill included
	SHA256   string // hex digest of those bytes
	Evidence string // set by Open: file name of the evidence copy in the ledger directory
}

// scanResult is what a verified read found.
type scanResult struct {
	end  int64     // offset after the last valid record
	torn *TornTail // non-nil when the file ends in a torn tail
}

// errStop ends a scan early without an error (a consumer stopped iterating).
var errStop = errors.New("stop")

// scan verifies the ledger read from r line by line against c, calling fn (when non-nil) for each
// verified record, in order. Lines are read with an explicit cap (MaxLineBytes). It returns a
// *CorruptError for anything but a torn tail, and never skips a line.
func scan(path string, r io.Reader, c *chain, fn func(Record) error) (scanResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	var long []byte // a line longer than br's buffer, assembled
	for {
		// A line that fits in br's buffer is used there, until the next read.
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], raw...)
			for err == bufio.ErrBufferFull && len(long) <= MaxLineBytes {
				raw, err = br.ReadSlice('\n')
				long = append(long, raw...)
			}
			raw = long
		}
		var rerr error
		if err != nil && err != bufio.ErrBufferFull {
			rerr = err
		}
		if rerr != nil && rerr != io.EOF {
			return scanResult{end: off}, fmt.Errorf("read ledger %s: %w", path, rerr)
		}
		if len(raw) == 0 {
			return scanResult{end: off}, nil // clean end
		}
		nl := raw[len(raw)-1] == '\n'
		tooLong := len(raw) > MaxLineBytes
		if nl && !tooLong {
			rec, le := c.accept(raw[:len(raw)-1])
			if le == nil {
				rec.Offset = off
				if fn != nil {
					rec.Body = bytes.Clone(rec.Body) // it points into raw, which the next read reuses
					if err := fn(rec); err != nil {
						return scanResult{end: off + int64(len(raw))}, err
					}
				}
				off += int64(len(raw))
				continue
			}
			if le.err != nil {
				return scanResult{end: off}, fmt.Errorf("ledger %s at offset %d (seq %d): %s: %w", path, off, c.seq+1, le.reason, le.err)
			}
			return classifyTail(path, off, c.seq+1, raw, le, br)
		}
		// No newline (end of file) or a line over the cap.
		var le *lineError
		if tooLong {
			le = notRecord("line exceeds the %d-byte cap", MaxLineBytes)
		} else {
			le = notRecord("no newline at the end of the file")
		}
		return classifyTail(path, off, c.seq+1, raw, le, br)
	}
}

// classifyTail decides whether the bytes from off to the end of the file (first, then the rest
// of br) are a torn tail or corruption. first holds the first bad line, le why it is bad.
func classifyTail(path string, off, seq int64, first []byte, le *lineError, br *bufio.Reader) (scanResult, error) {
	corrupt := func(reason string) (scanResult, error) {
		return scanResult{end: off}, &CorruptError{Path: path, Offset: off, Seq: seq, Reason: reason}
	}
	endsLine := first[len(first)-1] == '\n'
	if le.complete && endsLine {
		return corrupt(le.reason)
	}
	d := sha256.New()
	d.Write(first)
	keep := bytes.Clone(first[:min(len(first), MaxLineBytes+1)])
	total := int64(len(first))
	lastNonZero := int64(lastNonZeroIndex(first))
	buf := make([]byte, 64<<10)
	for {
		n, err := br.Read(buf)
		chunk := buf[:n]
		d.Write(chunk)
		if i := lastNonZeroIndex(chunk); i >= 0 {
			lastNonZero = total + int64(i)
		}
		if room := MaxLineBytes + 1 - len(keep); room > 0 {
			keep = append(keep, chunk[:min(room, n)]...)
		}
		total += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return scanResult{end: off}, fmt.Errorf("read ledger %s: %w", path, err)
		}
	}
	if lastNonZero >= MaxLineBytes {
		return corrupt(fmt.Sprintf("%s, and non-zero data continues for %d bytes: more than one record's worth, so not a torn tail",
			le.reason, lastNonZero+1))
	}
	region := keep[:int(lastNonZero)+1]
	// Every newline-terminated segment, wherever it starts, must hold no complete record but
	// ones the writer wrote while seq was not yet durable: those a power loss may keep when it
	// drops seq (a hole in the unsynced window), and nothing after seq was acknowledged.
	for start := 0; start < len(region); {
		i := bytes.IndexByte(region[start:], '\n')
		if i < 0 {
			break // the unterminated final fragment is incomplete by definition
		}
		seg := region[start : start+i]
		if at := durableRecordIn(seg, seq); at >= 0 {
			return corrupt(fmt.Sprintf("%s, and a complete record follows at offset %d that was written after seq %d was durable",
				le.reason, off+int64(start+at), seq))
		}
		start += i + 1
	}
	return scanResult{end: off, torn: &TornTail{Offset: off, Bytes: total, SHA256: hex.EncodeToString(d.Sum(nil))}}, nil
}

// durableRecordIn returns where in seg a syntactically complete record (trailer plus strict
// JSON payload) starts that a power loss cannot explain after the bad record seq, or -1. A power
// loss can keep a complete record after seq only if its writer had not yet made seq durable:
// a version 2 line whose synced is below seq, with a higher seq, and whose h is the hash of
// its own prev and payload (it chained to a record the loss dropped). Anything else — a
// version 1 line (written with everything before it durable), a record claiming seq was
// durable, one that does not hash to itself — is corruption.
func durableRecordIn(seg []byte, seq int64) int {
	for from := 0; ; {
		i := bytes.Index(seg[from:], []byte(`{"v":`))
		if i < 0 {
			return -1
		}
		at := from + i
		r, le := parseLine(seg[at:])
		switch {
		case le == nil && writtenUnsynced(r, seg[at:], seq):
		case le == nil || le.complete:
			return at
		}
		from = at + 1
	}
}

// writtenUnsynced reports whether the complete record r (line, without its newline) was
// written while seq was not yet durable, and is intact in itself.
func writtenUnsynced(r Record, line []byte, seq int64) bool {
	return r.V >= 2 && r.Synced < seq && r.Seq > seq &&
		hashIs(chainHash(r.Prev, line[:len(line)-trailerLen]), r.H)
}

func lastNonZeroIndex(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}

// readVerified opens path read-only and scans it.
func readVerified(fsys FS, path string, c *chain, fn func(Record) error) (scanResult, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return scanResult{}, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	return scan(path, f, c, fn)
}

// HasHeaderLine reports whether dir's ledger file begins with a complete line (its header, as
// Create writes it), reading that line only: a file without one opens as [ErrIncomplete]
// (nothing in it was ever acknowledged). It says nothing of the rest of the file.
func HasHeaderLine(dir string, opts Options) bool {
	f, err := opts.fs().OpenFile(filepath.Join(dir, FileName), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = bufio.NewReader(io.LimitReader(f, MaxLineBytes+1)).ReadBytes('\n')
	return err == nil
}
