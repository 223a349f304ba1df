package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Options configure Create, Open and OpenReadOnly. The zero value is production: the real
// filesystem, the wall clock, UUIDv7 ids.
type Options struct {
	FS    FS               // nil: OSFS{}
	Now   func() time.Time // record timestamps; nil: time.Now
	NewID func() string    // ids for records appended without one; nil: UUIDv7
	// Visit, if set, is called by Open, OpenReadOnly and Verify with each record as soon as it
	// is verified, in seq order, by Open also with the recovery record it appends after
	// repairing a torn tail, and by Create with the header record it wrote: a caller builds
	// its state in the same pass that verifies (or writes) the file instead of reading it
	// again with Records. An error from Visit stops the open, which
	// returns that error as is. When the open fails, later or for any reason, what Visit has
	// seen means nothing.
	Visit func(Record) error
	// Deferred makes Create fsync nothing: the header, and the directory entries that lead to
	// the file, become durable with the ledger's first synced append, Sync or Close (see
	// Create). A writer whose first durable record comes soon after Create (a session: its
	// first model-call intent) saves the header's fsync; the records written before that fsync
	// are version 3 lines with synced 0.
	Deferred bool
}

func (o Options) fs() FS {
	if o.FS == nil {
		return OSFS{}
	}
	return o.FS
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o Options) newID() string {
	if o.NewID != nil {
		return o.NewID()
	}
	id, _ := uuid.NewV7FromReader(runtimeRand{}) // runtimeRand never fails
	return id.String()
}

// runtimeRand reads the runtime's generator (ChaCha8, seeded from the operating system's
// entropy at process start): a record id must be unique, never secret, and the first
// crypto/rand read of a process (mapping and seeding the kernel's random state, ~60 µs) would
// fall on a new session's path to its first model request.
type runtimeRand struct{}

func (runtimeRand) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 8 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], rand.Uint64())
		copy(p[i:], b[:])
	}
	return len(p), nil
}

// Report is what opening or verifying found.
type Report struct {
	Header   Header
	HeadSeq  int64  // seq of the last verified record
	HeadHash string // its h
	Size     int64  // bytes of verified records (the whole file unless Torn is set)
	// Torn is the torn tail found. Open repaired it: Evidence names the copy, the head is the
	// recovery record, and Warnings says so. OpenReadOnly and Verify only report it.
	Torn     *TornTail
	Warnings []string
}

// Ledger is one open ledger. A Ledger from Create or Open is the single writer: it holds the
// directory's lock until Close. A Ledger from OpenReadOnly holds no lock and refuses writes.
// All methods are safe for concurrent use; appends are serialized by one mutex (the append
// queue), which assigns seq, prev and h in call order.
type Ledger struct {
	dir, path string
	fsys      FS
	opts      Options
	readOnly  bool

	mu     sync.Mutex
	f      File      // O_WRONLY|O_APPEND; nil when read-only
	lock   io.Closer // nil when read-only
	header Header
	c      *chain // seq, prev, ids and hashes of every record in the file
	size   int64  // bytes of verified or appended records
	dirty  bool   // appended bytes not yet fsynced
	// synced and syncedH are the seq and h of the last record known durable (fsynced by this
	// Ledger, or verified and fsynced by Open); unsynced counts the bytes appended after it.
	synced   int64
	syncedH  string
	unsynced int64 // MaxLineBytes after Open: what it verified may not be durable
	// dirs are the directories whose entries the next fsync makes durable after the file's
	// (Create's directory and the parents of those it made), innermost first.
	dirs   []string
	fault  error // the write or fsync error that faulted the ledger
	closed bool
	enc    []byte // reused for bodies that encode themselves (build copies a body into its line)
}

// Create makes a new ledger in dir (created, with its parents, if missing): it takes the lock,
// creates ledger.jsonl exclusively, writes the header (seq 1, id header.ID) and fsyncs it,
// then the directory entries of the file and of every directory Create made, innermost first
// (on a journalling filesystem the file's fsync commits the directory changes too, and the
// directories' find nothing left to write). With [Options].Deferred Create fsyncs nothing:
// the header and those entries become durable, in the same order, with the first synced
// append, Sync or Close, and a power loss before then leaves no ledger, one without a complete
// header ([ErrIncomplete]: nothing in it was acknowledged), or one whose unsynced records open
// as a torn tail or a hole. header.Format is set to 1, the version of the header line.
func Create(dir string, header Header, opts Options) (*Ledger, error) {
	switch header.Type {
	case TypeSession, TypeRun, TypeLoop:
	default:
		return nil, fmt.Errorf("ledger: create: unknown ledger type %q", header.Type)
	}
	if !ValidID(header.ID) {
		return nil, fmt.Errorf("ledger: create: invalid ledger id %q", header.ID)
	}
	header.Format = 1
	fsys := opts.fs()
	made, err := makeDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("ledger: create %s: %w", dir, err)
	}
	lock, err := fsys.Lock(filepath.Join(dir, LockName))
	if err != nil {
		return nil, err
	}
	l := &Ledger{dir: dir, path: filepath.Join(dir, FileName), fsys: fsys, opts: opts, lock: lock, c: newChain()}
	f, err := fsys.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("ledger: create: %w", err)
	}
	l.f = f
	recs, err := l.appendLocked([]pending{{kind: KindHeader, id: header.ID, body: header}}, nil)
	if err == nil && opts.Visit != nil {
		err = opts.Visit(recs[0])
	}
	if err != nil {
		// Nothing was acknowledged: remove the partial file so that Create can be retried.
		f.Close()
		_ = fsys.Remove(l.path)
		lock.Close()
		return nil, fmt.Errorf("ledger: create: %w", err)
	}
	l.dirs = append([]string{dir}, made...)
	if !opts.Deferred {
		if err := l.syncLocked(); err != nil {
			f.Close()
			_ = fsys.Remove(l.path)
			lock.Close()
			return nil, fmt.Errorf("ledger: create: %w", err)
		}
	}
	l.header = header
	return l, nil
}

// Open opens an existing ledger for appending: it takes the lock, verifies the whole file, and
// repairs a torn tail (evidence copy, truncate, fsync, recovery record). Corruption fails with
// a *CorruptError; nothing is exposed or changed.
func Open(dir string, opts Options) (*Ledger, *Report, error) {
	fsys := opts.fs()
	lock, err := fsys.Lock(filepath.Join(dir, LockName))
	if err != nil {
		return nil, nil, err
	}
	l, rep, err := load(dir, opts, false)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	l.lock = lock
	f, err := fsys.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		lock.Close()
		return nil, nil, fmt.Errorf("ledger: open for append: %w", err)
	}
	l.f = f
	// What a killed writer left in the page cache verified but may not be durable yet (at most
	// its unsynced window): the first write fsyncs it before writing anything after it (a
	// ledger only read and closed again is not fsynced).
	l.unsynced = MaxLineBytes
	l.synced, l.syncedH = 1, hex.EncodeToString(l.c.hashes[0][:])
	if rep.Torn != nil {
		rec, err := l.repair(rep)
		if err == nil && opts.Visit != nil {
			err = opts.Visit(rec)
		}
		if err != nil {
			l.f.Close()
			lock.Close()
			return nil, nil, err
		}
	}
	return l, rep, nil
}

// OpenReadOnly verifies the ledger without taking the lock and returns a read-only Ledger over
// its verified records. A torn tail (a writer may be mid-append) is reported in Report.Torn and
// not exposed; corruption fails with a *CorruptError.
func OpenReadOnly(dir string, opts Options) (*Ledger, *Report, error) {
	return load(dir, opts, true)
}

// Verify checks the whole chain, read-only and without the lock, and reports the head. A torn
// tail is an error here (wrapping ErrTornTail; Open would repair it) with the report of the
// verified prefix; corruption is a *CorruptError.
func Verify(dir string, opts Options) (*Report, error) {
	l, rep, err := load(dir, opts, true)
	if err != nil {
		return nil, err
	}
	_ = l.Close()
	if rep.Torn != nil {
		return rep, fmt.Errorf("ledger %s: %d bytes after seq %d are an incomplete record: %w",
			l.path, rep.Torn.Bytes, rep.HeadSeq, ErrTornTail)
	}
	return rep, nil
}

// load verifies the file and builds a Ledger without a write handle.
func load(dir string, opts Options, readOnly bool) (*Ledger, *Report, error) {
	l := &Ledger{dir: dir, path: filepath.Join(dir, FileName), fsys: opts.fs(), opts: opts, readOnly: readOnly, c: newChain()}
	res, err := readVerified(l.fsys, l.path, l.c, opts.Visit)
	if err != nil {
		return nil, nil, err
	}
	if l.c.seq == 0 {
		return nil, nil, fmt.Errorf("ledger %s: %w", l.path, ErrIncomplete)
	}
	l.header = l.c.header
	l.size = res.end
	rep := &Report{Header: l.header, HeadSeq: l.c.seq, HeadHash: l.c.prev, Size: res.end, Torn: res.torn}
	return l, rep, nil
}

// Entry is one record to append.
type Entry struct {
	Kind   string // a valid kind; not one of this package's (header, recovery, salvage)
	ID     string // a provisioned id, or "" to generate one
	Parent string // an earlier record's id, or "" for none (null)
	// Body is encoded by its AppendJSON([]byte) ([]byte, error) method when it has one (it must
	// write what json.Marshal would: no reflection, no first-use cost), else with encoding/json;
	// the encoding must be strict JSON (a json.RawMessage in it too).
	Body any
	// NoSync: the record is written but not fsynced; it becomes durable with the next synced
	// Append, Sync or Close (group commit), and a power loss before then may lose it (see
	// "Writing and fsync policy" in the package doc). An intent must leave it false: it is
	// durable before its effect starts. A result may set it when the next synced record (the
	// next intent) or a Sync comes before anything acts on the result outside the process.
	NoSync bool
}

// Append adds one record: it assigns seq, prev and h, writes the whole line with one write
// call, and (unless e.NoSync) fsyncs before returning. Invalid input (kind, ids, a body that is
// not strict JSON or a line over MaxLineBytes) is refused without writing. A write or fsync
// error faults the ledger: this and every later write returns an error wrapping ErrFaulted and
// the cause.
func (l *Ledger) Append(e Entry) (Record, error) {
	recs, err := l.AppendAll([]Entry{e}, nil)
	if err != nil {
		return Record{}, err
	}
	return recs[0], nil
}

// AppendAll adds records as one unit: every line is built and checked first — as Append checks
// one, each against the records before it, this batch's included — and then, if check is set,
// check is called with each record exactly as it will be written, in order. Only when every
// line passed is anything written: the lines go out with one write call and are fsynced once
// (unless every entry is NoSync); an empty batch writes nothing. One refused entry refuses them
// all, writing nothing; a refusal by check is returned as is. A write or fsync error faults the
// ledger as for Append.
//
// check runs with the append queue held: it must not call l's writing methods (it may read
// blobs).
func (l *Ledger) AppendAll(es []Entry, check func(Record) error) ([]Record, error) {
	for _, e := range es {
		switch e.Kind {
		case KindHeader, KindRecovery, KindSalvage:
			return nil, fmt.Errorf("ledger: kind %q is reserved for the ledger itself", e.Kind)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, nil
	}
	ps := make([]pending, len(es))
	for i, e := range es {
		ps[i] = pending{kind: e.Kind, id: e.ID, parent: e.Parent, body: e.Body, sync: !e.NoSync}
		if ps[i].id == "" {
			ps[i].id = l.opts.newID()
		}
	}
	return l.appendLocked(ps, check)
}

// writable says why l cannot write, if it cannot. l.mu is held.
func (l *Ledger) writable() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.readOnly:
		return ErrReadOnly
	case l.fault != nil:
		return fmt.Errorf("%w: %w", ErrFaulted, l.fault)
	}
	return nil
}

// pending is one record to build.
type pending struct {
	kind, id, parent string
	body             any
	sync             bool
	ts               time.Time
}

// appendOne is appendLocked for one record of the ledger's own.
func (l *Ledger) appendOne(kind, id, parent string, body any) (Record, error) {
	recs, err := l.appendLocked([]pending{{kind: kind, id: id, parent: parent, body: body, sync: true}}, nil)
	if err != nil {
		return Record{}, err
	}
	return recs[0], nil
}

// appendLocked builds and checks every record, then writes them with one write call and
// fsyncs if any asks for it. l.mu is held (or l is not yet shared).
func (l *Ledger) appendLocked(ps []pending, check func(Record) error) ([]Record, error) {
	for i := range ps {
		ps[i].ts = l.opts.now() // once: a batch built again keeps its timestamps
	}
	recs, sums, buf, doSync, err := l.buildBatch(ps, check)
	if err != nil {
		return nil, err
	}
	if l.unsynced > 0 && l.unsynced+int64(len(buf)) > MaxLineBytes {
		// The unsynced window would exceed one line's worth, the most a torn tail may span:
		// make what is pending durable first, and build the batch again on top of it (its
		// records now declare a later synced seq).
		if err := l.syncLocked(); err != nil {
			return nil, err
		}
		if recs, sums, buf, doSync, err = l.buildBatch(ps, nil); err != nil {
			return nil, err
		}
	}
	n, err := l.f.Write(buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write: %d of %d bytes: %w", n, len(buf), io.ErrShortWrite)
	}
	if err != nil {
		l.fault = fmt.Errorf("write %s seq %d: %w", l.path, l.c.seq+1, err)
		return nil, fmt.Errorf("%w: %w", ErrFaulted, l.fault)
	}
	l.dirty = true
	l.size += int64(len(buf))
	l.unsynced += int64(len(buf))
	for i := range recs {
		l.c.commit(recs[i], sums[i])
	}
	if l.c.seq == 1 {
		l.header = l.c.header
	}
	if doSync {
		if err := l.syncLocked(); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// buildBatch builds and checks the lines of ps after the chain's head, each declaring the
// ledger's synced seq when records after it are not yet durable, and returns them as one
// buffer. check (when set) sees each record; it is not called again when a batch is rebuilt
// after a sync, which changes only the synced members (apply depends on bodies and ids).
func (l *Ledger) buildBatch(ps []pending, check func(Record) error) ([]Record, [][sha256.Size]byte, []byte, bool, error) {
	// The writer checks each line exactly as a reader will, on a copy of the chain's position
	// that also holds the ids of this batch, so it never writes a line that would not verify.
	probe := &chain{seq: l.c.seq, prev: l.c.prev, ids: l.c.ids}
	if len(ps) > 1 {
		probe.staged = map[string]struct{}{}
	}
	recs := make([]Record, len(ps))
	sums := make([][sha256.Size]byte, len(ps))
	var buf []byte
	doSync := false
	for i, p := range ps {
		line, err := l.build(probe, p)
		if err != nil {
			return nil, nil, nil, false, err
		}
		rec, sum, le := probe.check(line[:len(line)-1]) // rec.Body points into line, which is not reused
		if le != nil {
			return nil, nil, nil, false, fmt.Errorf("ledger: refusing to write an invalid record: %s", le.reason)
		}
		// The ids parsed back equal the ones the line was built from: keep those, so that what
		// the chain (and a caller's state) keeps of every record is not a second copy of them.
		if rec.ID == p.id {
			rec.ID = p.id
		}
		if rec.ParentID == p.parent {
			rec.ParentID = p.parent
		}
		if check != nil {
			if err := check(rec); err != nil {
				return nil, nil, nil, false, err
			}
		}
		probe.stage(rec)
		rec.Offset = l.size + int64(len(buf))
		recs[i], sums[i] = rec, sum
		if buf == nil {
			buf = line // appending after it never touches the bytes rec.Body points to
		} else {
			buf = append(buf, line...)
		}
		doSync = doSync || p.sync
	}
	return recs, sums, buf, doSync, nil
}

// build encodes p as the record after probe's position and checks its ids and size.
func (l *Ledger) build(probe *chain, p pending) ([]byte, error) {
	if !ValidKind(p.kind) {
		return nil, fmt.Errorf("ledger: invalid kind %q", p.kind)
	}
	if !ValidID(p.id) {
		return nil, fmt.Errorf("ledger: invalid id %q (1-%d of A-Z a-z 0-9 . _ : -)", p.id, maxIDLen)
	}
	if probe.has(p.id) {
		return nil, fmt.Errorf("ledger: id %q: %w", p.id, ErrDuplicateID)
	}
	if p.parent != "" && !probe.has(p.parent) {
		return nil, fmt.Errorf("ledger: parent %q: %w", p.parent, ErrUnknownParent)
	}
	b, err := encodeBody(l.enc[:0], p.body)
	if err != nil {
		return nil, err
	}
	if cap(b) <= maxReusedBody {
		defer func() { l.enc = b[:0] }() // buildLine copies b into the line
	}
	// Every record up to l.synced is durable; a record with undurable ones before it says so
	// (synced 0, a version 3 line: not even the header is, the ledger was created Deferred and
	// not yet fsynced; a reader without version 3 refuses the line as too new, not corrupt).
	v, synced := 1, int64(0)
	switch {
	case probe.seq == 0 || probe.seq <= l.synced:
	case l.synced == 0:
		v = 3
	default:
		v, synced = 2, l.synced
	}
	line, _ := buildLine(v, probe.seq+1, synced, p.id, p.parent, p.kind, p.ts, b, probe.prev)
	if len(line) > MaxLineBytes {
		return nil, fmt.Errorf("ledger: %s record of %d bytes exceeds the %d-byte line cap; store the payload with PutBlob and reference its digest: %w",
			p.kind, len(line), MaxLineBytes, ErrTooLarge)
	}
	return line, nil
}

// syncLocked fsyncs appended bytes; an error faults the ledger (fsync is never retried).
func (l *Ledger) syncLocked() error {
	if !l.dirty && l.unsynced == 0 && len(l.dirs) == 0 {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		l.fault = fmt.Errorf("fsync %s: %w", l.path, err)
		return fmt.Errorf("%w: %w", ErrFaulted, l.fault)
	}
	// A new ledger's file, then the entries that lead to it (see Create).
	for len(l.dirs) > 0 {
		if err := l.fsys.SyncDir(l.dirs[0]); err != nil {
			l.fault = fmt.Errorf("fsync directory %s: %w", l.dirs[0], err)
			return fmt.Errorf("%w: %w", ErrFaulted, l.fault)
		}
		l.dirs = l.dirs[1:]
	}
	l.dirty = false
	l.synced, l.syncedH, l.unsynced = l.c.seq, l.c.prev, 0
	return nil
}

// Sync makes every appended record durable (the group commit for NoSync records).
func (l *Ledger) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	return l.syncLocked()
}

// Close fsyncs NoSync records still pending (unless the ledger is faulted), closes the file and
// releases the lock. Later calls return ErrClosed; Close itself may be called again.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if l.f != nil {
		if l.fault == nil && (l.dirty || len(l.dirs) > 0) {
			if err := l.syncLocked(); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, l.f.Close())
	}
	if l.lock != nil {
		errs = append(errs, l.lock.Close())
	}
	return errors.Join(errs...)
}

// Dir is the ledger's directory.
func (l *Ledger) Dir() string { return l.dir }

// Header is the ledger's header (seq 1).
func (l *Ledger) Header() Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header
}

// Head is the seq and h of the last record written (fsynced unless it was a NoSync append).
// Anchor another ledger to it only after a synced append or Sync.
func (l *Ledger) Head() (seq int64, h string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.seq, l.c.prev
}

// Durable is the seq and h of the last record known durable: fsynced by this Ledger, or
// verified (and fsynced) by Open. Anchor another ledger to it, not to an unsynced Head.
func (l *Ledger) Durable() (seq int64, h string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.synced, l.syncedH
}

// Has reports whether a record with id exists.
func (l *Ledger) Has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.c.ids[id]
	return ok
}

// CheckAnchor verifies that the record seq is still in the ledger with hash h, as recorded by a
// dependent ledger. Otherwise it returns an error wrapping ErrRollback.
func (l *Ledger) CheckAnchor(seq int64, h string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq < 1 || seq > l.c.seq {
		return fmt.Errorf("ledger %s: anchored seq %d is not present (head is seq %d): %w", l.path, seq, l.c.seq, ErrRollback)
	}
	got := l.c.hashes[seq-1]
	if hex.EncodeToString(got[:]) != h {
		return fmt.Errorf("ledger %s: seq %d has h %x, the anchor recorded %s: %w", l.path, seq, got, h, ErrRollback)
	}
	return nil
}

// Records iterates over the ledger's records in seq order, re-reading the file and verifying it
// again up to the head known when Records is called (so it is safe while appends continue).
// After an error (a *CorruptError if the file changed under the ledger) iteration stops.
func (l *Ledger) Records() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		l.mu.Lock()
		end, head := l.size, l.c.seq
		var want [sha256.Size]byte
		if head > 0 {
			want = l.c.hashes[head-1]
		}
		closed := l.closed
		l.mu.Unlock()
		if closed {
			yield(Record{}, ErrClosed)
			return
		}
		f, err := l.fsys.OpenFile(l.path, os.O_RDONLY, 0)
		if err != nil {
			yield(Record{}, fmt.Errorf("ledger: open for reading: %w", err))
			return
		}
		defer f.Close()
		c := newChain()
		res, err := scan(l.path, io.LimitReader(f, end), c, func(r Record) error {
			if !yield(r, nil) {
				return errStop
			}
			return nil
		})
		switch {
		case err == errStop:
			return
		case err != nil:
			yield(Record{}, err)
			return
		}
		if res.torn != nil || c.seq != head || head > 0 && c.hashes[head-1] != want {
			yield(Record{}, &CorruptError{Path: l.path, Offset: res.end, Seq: c.seq + 1,
				Reason: fmt.Sprintf("the file changed since it was verified (head seq %d expected)", head)})
		}
	}
}

// makeDir creates dir and missing parents and returns the parents whose entries changed
// (innermost first), to be fsynced once something under dir is durable.
func makeDir(fsys FS, dir string) ([]string, error) {
	err := fsys.Mkdir(dir, 0o700)
	switch {
	case err == nil:
		return []string{filepath.Dir(dir)}, nil
	case errors.Is(err, fs.ErrExist):
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, err
		}
		made, err := makeDir(fsys, parent)
		if err != nil {
			return nil, err
		}
		if err := fsys.Mkdir(dir, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return made, nil
			}
			return nil, err
		}
		return append([]string{parent}, made...), nil
	}
	return nil, err
}

// ensureDir creates dir and missing parents, fsyncing each parent whose entries changed.
func ensureDir(fsys FS, dir string) error {
	made, err := makeDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, d := range made {
		if err := fsys.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
