package proc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/strictjson"
)

// Journal is the record a rein process keeps of the processes it runs, so that the next rein
// can end what they left running if this one dies without ending it ([Reap]). It is one
// file in its directory, <pid>-<start>-<random>.json, written atomically (a temporary file
// renamed over it) before the first process it names starts and whenever a run starts or
// ends; [Journal.Close] removes it. A rein that starts no process writes none. It names this
// rein process (pid and start time, so a reused pid is not taken for it), the id in the tags
// of every process it started ([EnvTag]), and each live run's process (pid, start time,
// process group and its session). It is safe for concurrent use.
type Journal struct {
	mu      sync.Mutex
	dir     string
	path    string
	rec     journalRecord
	written bool // the file exists
	closed  bool
}

type journalRecord struct {
	Pid   int          `json:"pid"`
	Start uint64       `json:"start"`
	ID    string       `json:"id"`
	Runs  []journalRun `json:"runs"`
}

type journalRun struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
	Pgid  int    `json:"pgid"`
	Sid   int    `json:"sid"`
}

// maxJournalBytes bounds a journal file [Reap] reads.
const maxJournalBytes = 1 << 20

// OpenJournal returns this process's journal in dir. Nothing is written yet: the directory
// (0700 when missing) and the file are made before the first process starts, and an error
// doing so fails that start.
func OpenJournal(dir string) *Journal { return &Journal{dir: dir} }

// name fills in the record and the file's name, once (the caller holds mu).
func (j *Journal) name() {
	if j.path != "" {
		return
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	j.rec = journalRecord{Pid: os.Getpid(), Start: selfStart(), ID: selfID(), Runs: []journalRun{}}
	j.path = filepath.Join(j.dir, fmt.Sprintf("%d-%d-%s.json", j.rec.Pid, j.rec.Start, hex.EncodeToString(suffix)))
}

// Path is the journal's file.
func (j *Journal) Path() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.name()
	return j.path
}

// ready writes the journal, once, before the first process it will name starts: a process
// that escapes before its run is recorded is still found by its tag.
func (j *Journal) ready() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errors.New("the process journal is closed")
	}
	if j.written {
		return nil
	}
	j.name()
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("create the process journal directory: %w", err)
	}
	if err := j.write(); err != nil {
		return err
	}
	j.written = true
	return nil
}

// Close removes the journal: this process ends nothing more. Closing twice is no error.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	if !j.written {
		return nil
	}
	if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the process journal: %w", err)
	}
	return nil
}

func (j *Journal) add(pid int, g group) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errors.New("the process journal is closed")
	}
	j.rec.Runs = append(j.rec.Runs, journalRun{Pid: pid, Start: g.start, Pgid: pid, Sid: g.sid})
	return j.write()
}

func (j *Journal) remove(pid int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rec.Runs = slices.DeleteFunc(j.rec.Runs, func(r journalRun) bool { return r.Pid == pid })
	if !j.closed {
		_ = j.write() // a stale entry only makes a later Reap look for a group that is gone
	}
}

// write replaces the file; the caller holds mu. Nothing is fsynced: a rein killed by a signal
// does not need it (the kernel keeps what was written), and a power loss ends every process
// the journal names.
func (j *Journal) write() error {
	data, err := json.Marshal(j.rec)
	if err != nil {
		return err
	}
	if err := atomicfile.Replace(j.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the process journal %s: %w", j.path, err)
	}
	return nil
}

// Reap ends what dead rein processes left running: for every journal in dir whose rein
// process no longer runs, it ends every process that carries one of that rein's tracked tags
// or belongs to one of its runs' process groups, with everything below those, and removes
// the journal. Journals of running rein processes (this one included) are left alone. A
// journal that cannot be read is kept and reported in the error; the others are reaped all
// the same. A missing dir is nothing to reap.
func Reap(dir string) ([]Ended, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the process journals: %w", err)
	}
	var ended []Ended
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		rec, err := readJournal(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("process journal %s: %w (remove it once no rein that wrote it runs)", path, err))
			continue
		}
		if rec.ID == selfID() || running(rec.Pid, rec.Start) {
			continue
		}
		sel := selector{tags: tagMatch{id: rec.ID}, groups: map[int]group{}, since: rec.Start}
		for _, r := range rec.Runs {
			sel.groups[r.Pgid] = group{start: r.Start, sid: r.Sid}
		}
		ended = append(ended, sweep(sel)...)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove process journal %s: %w", path, err))
		}
	}
	return ended, errors.Join(errs...)
}

// readJournal reads one journal strictly.
func readJournal(path string) (journalRecord, error) {
	var rec journalRecord
	f, err := os.Open(path)
	if err != nil {
		return rec, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJournalBytes+1))
	if err != nil {
		return rec, err
	}
	if len(data) > maxJournalBytes {
		return rec, fmt.Errorf("larger than %d bytes", maxJournalBytes)
	}
	if err := (strictjson.Options{MaxDocumentBytes: maxJournalBytes}).Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("not a process journal: %w", err)
	}
	if _, err := hex.DecodeString(rec.ID); err != nil || len(rec.ID) != 16 {
		return rec, fmt.Errorf("not a process journal: id %q is not 16 hex digits", rec.ID)
	}
	if rec.Pid <= 0 {
		return rec, fmt.Errorf("not a process journal: pid %d", rec.Pid)
	}
	for _, r := range rec.Runs {
		if r.Pid <= 1 || r.Pgid <= 1 || r.Sid < 0 {
			return rec, fmt.Errorf("not a process journal: run pid %d, group %d", r.Pid, r.Pgid)
		}
	}
	return rec, nil
}
