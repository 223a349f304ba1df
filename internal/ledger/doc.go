// Package ledger is rein's durable history: an append-only, hash-chained file of JSON lines,
// written by one process at a time. Every session, delivery run and loop is one ledger. This
// comment states the format, the protocol and what the code guarantees.
//
// # Directory layout
//
//	ledger.jsonl               the records, one JSON object per line
//	ledger.lock                flock(2)ed by the single writer; holds its pid
//	ledger.jsonl.torn-<seq>    evidence copies kept by torn-tail repairs (".<n>" if repeated)
//	blobs/sha256/<aa>/<digest> content-addressed payloads too large for a line
//
// # Line format
//
// Each line is one JSON object whose members are, in exactly this order:
//
//	{"v":1,"seq":2,"id":"…","parentId":"…"|null,"kind":"…","ts":"<RFC 3339, UTC>","body":<any JSON>,"prev":"<h of seq-1>","h":"<64 hex>"}
//	{"v":2,"seq":7,"synced":5,"id":"…",…}
//	{"v":3,"seq":2,"synced":0,"id":"…",…}
//
// followed by "\n". A version 2 line has one more member, "synced", right after seq: the seq
// through which the writer had fsynced the ledger when it wrote the record, 1 ≤ synced ≤
// seq-2 (records synced+1 … seq-1 were written but not yet durable). A version 3 line is a
// version 2 line that may say synced 0: not even the header was durable (a ledger created with
// [Options].Deferred and not yet fsynced); the writer writes version 3 only then, so a reader
// that knows only versions 1 and 2 refuses such a ledger as too new, not as corrupt. The writer writes a
// version 1 line when every record before it is durable, a version 2 line otherwise; the header
// is always version 1 (its body's format is 1). The payload is the line without its fixed 72-byte trailer `,"h":"<64
// lowercase hex>"` plus the closing "}", i.e. the object as it would be without h. Then
//
//	h = hex(sha256(prev ‖ payload))
//
// where prev is the 64 ASCII hex characters of the previous line's h (nothing for seq 1).
// Verification strips the trailer and hashes the bytes as written; nothing is ever re-encoded.
// seq runs 1, 2, 3… without gaps; ids are unique (1–128 of A-Z a-z 0-9 . _ : -); parentId is
// null or an earlier id. seq 1 is the header: kind "header", id = the ledger id, body [Header]
// (type session|run|loop, id, format version, bindings). No line exceeds [MaxLineBytes] (1 MiB,
// newline included); Append refuses larger records with [ErrTooLarge] — store the payload
// with [Ledger.PutBlob] and put the digest in the body.
//
// Kinds are 1–64 of a-z 0-9 _ . - starting with a letter. The ledger owns "header",
// "recovery" and "salvage"; every other kind belongs to the caller. A reader that meets a kind it
// does not know may skip the record only if the kind starts with "x-" ([Skippable]); any other
// unknown kind must stop it. The chain rule (trailer, h, prev, seq) is the same in every format
// version; a record that chains correctly but has a version v newer than [FormatVersion] stops
// the reader with [ErrUnsupportedVersion] (one that does not chain is corruption).
//
// # Writing and fsync policy
//
// [Create] and [Open] take an exclusive non-blocking flock on ledger.lock and write the
// process's pid into it; a second writer fails with a [*LockedError] (errors.Is ErrLocked) that
// names that pid. The kernel releases the lock when the holder exits or is killed. Create makes
// the missing directories, then ledger.jsonl with O_EXCL, writes and fsyncs the header, then
// fsyncs the directory and the parent of each directory it made, innermost first. With
// [Options].Deferred (sessions) it fsyncs nothing: the header and those directories become
// durable, in the same order, with the first synced append, Sync or Close, and until then a
// power loss leaves no ledger or one without a complete header ([ErrIncomplete]).
//
// [Ledger.Append] is the append queue: under one mutex it assigns seq, prev and h, builds the
// whole line in memory, checks it with the same verifier readers use, and writes it with one
// write call on an O_APPEND descriptor. Unless [Entry].NoSync is set it then fsyncs before
// returning: intents (before their effect starts) and results (before they are acknowledged)
// must be appended this way. [Ledger.AppendAll] appends several records as one unit: all are
// built and checked (and passed to the caller's check, which a reader's rules can run in) before
// one write and one fsync, so a refused record leaves nothing of its batch. NoSync records
// become durable with the next synced Append, [Ledger.Sync] or [Ledger.Close] (group commit),
// and a power loss may drop them.
//
// The invariant the writer keeps, and callers build on:
//
//   - every effect is preceded by a durable intent: the intent is appended synced, and the
//     effect starts only after Append returns (a read nobody outside the process sees is no
//     effect: a session appends its intent NoSync, as a result);
//   - a result may be appended NoSync when the next synced record (the next intent, the end of
//     the run) or a Sync comes before anything outside the process acts on it; it is then
//     durable before its consumer sees it, or it is lost with everything after it — and a caller
//     treats an intent without a result as an effect of unknown outcome (for sessions: re-run if
//     replay-safe, otherwise an "interrupted" result), the same as a crash while it ran;
//   - [Ledger.Durable] names the last record known durable; anchor other ledgers to it (or to
//     Head after a synced append).
//
// To make every state a power loss can leave openable, the writer also keeps the unsynced window
// small and self-describing: it fsyncs before a write that would make the bytes written since
// the last fsync exceed MaxLineBytes (so a crash damages at most one line's worth, the most
// Open accepts as a torn tail), and a record it writes while earlier ones are not yet durable
// is a version 2 line naming the last durable seq (synced). The first write after Open fsyncs
// first: what a killed writer left in the page cache verifies but may not be durable.
//
// A short write, a write error or an fsync error faults the ledger: the call returns an error
// wrapping [ErrFaulted] and the cause, and every later write (Append, Sync, PutBlob) returns
// the same; nothing more is appended by this Ledger and fsync is never retried. Reads (Head,
// CheckAnchor, Records, Blob) keep working on what was verified or written. To continue, Close
// and Open again: Open re-reads the file from disk.
//
// Blobs ([Ledger.PutBlob]) are written to a temp file, fsynced, renamed into
// blobs/sha256/<aa>/<digest> and the directory fsynced before PutBlob returns; append the record
// that names the digest only then. [Ledger.Blob] verifies the digest on every read.
//
// # Opening and recovery
//
// [Open] verifies the whole file before exposing anything: it reads lines with an explicit cap
// (MaxLineBytes, not bufio.Scanner's default), checks the trailer shape, strict JSON (valid
// UTF-8, no duplicate keys, exact member names and order), h, prev, seq continuity, unique ids
// and known parentIds. Then:
//
//   - Torn tail: the bytes after the last valid record contain no complete record (a line with
//     a well-formed trailer whose payload is strict JSON) — only a final fragment without a
//     newline, or lines that are unparseable or lack the trailer — followed by nothing but zero
//     bytes, and the non-zero part is at most one line's worth. Open copies the file to
//     ledger.jsonl.torn-<seq> (fsynced, directory fsynced), truncates to the last valid record,
//     fsyncs, appends a "recovery" record {truncatedBytes, discardedSha256, evidence} (fsynced)
//     and reports a W_LEDGER_TORN_TAIL_REPAIRED warning in [Report]. Repair is idempotent: a
//     second Open finds an intact file; a crash during repair leaves either the same torn tail
//     (repaired again with a second evidence copy) or an intact file.
//
//   - Hole in the unsynced window: as a torn tail, except that complete records follow the
//     damage — a filesystem may persist a later unsynced write and drop (or garble, or tear) an
//     earlier one. It is repaired exactly like a torn tail (evidence, truncate at the first bad
//     line, recovery record) when every complete record in the damaged bytes is a version 2
//     line with a higher seq than the damaged one N, synced < N, and h = sha256(prev ‖ payload)
//     of its own bytes: its writer wrote it before N was durable, so no fsync completed after N
//     was written, nothing from N on was acknowledged, and no effect whose intent is among them
//     started. A version 1 line, or a synced ≥ N, after the damage means N was durable when the
//     later record was written: that is corruption, as is a complete record that does not hash
//     to itself.
//
//   - Anything else — a complete line with a wrong h, prev or seq, a duplicated, deleted or
//     reordered line, an unknown parentId, a complete record after a bad line that is not one
//     a hole allows — is corruption:
//     a [*CorruptError] (errors.Is ErrCorrupt) with the offset and seq of the first bad line.
//     Nothing is skipped or changed; [Salvage] copies the valid prefix into a new ledger on
//     explicit request.
//
//   - A file without a complete header (its Create never finished, or a deferred Create's
//     header was lost to a power loss, with nothing but version 3 records of synced 0 after
//     it) is [ErrIncomplete].
//
// A crash or power loss therefore leaves an intact file, a torn tail or a hole in the unsynced
// window, and never loses a record that was durable (fsynced) before it: TestPowerLoss (every
// operation of a workload with NoSync records, every crash mode of ledgertest.MemFS) and
// session's TestPowerLossMatrix (every subset of the unsynced writes of a multi-turn session
// kept, each write torn at byte offsets; -session.powerloss.long tears at every byte) check it.
//
// The chain cannot see the loss of complete trailing records (a restored backup, a lying disk
// cache). A ledger that depends on another records its [Ledger.Head] after a synced append; on
// resume [Ledger.CheckAnchor] fails with [ErrRollback] if that (seq, h) is gone.
//
// [OpenReadOnly] and [Verify] take no lock and change nothing: they report a torn tail instead
// of repairing it (Verify returns it as an error wrapping [ErrTornTail]), and report the head.
//
// # Reading in the verifying pass
//
// [Options].Visit lets a caller build its state while the file is verified instead of reading
// it again with [Ledger.Records]: Open, OpenReadOnly and Verify call it with each record as soon
// as that record is verified (its line checked and chained to the one before), in seq order,
// and Open calls it last with the recovery record it appends after repairing a torn tail. It
// sees exactly the records Records would then yield. Visit runs before the rest of the file is
// verified, so what it saw means nothing when the open fails; an error from Visit stops the open
// (before any repair, unless it is the recovery record's) and is returned as is, the lock
// released. Visit runs on the opening goroutine, before the Ledger exists: it reads blobs with
// [ReadBlob]. Each record it gets is its own (Body included).
//
// # Goroutines and ownership
//
// A writable Ledger owns the lock and the O_APPEND descriptor until Close. Its methods may be
// called from any goroutine; Append, Sync, Close and the fault state are serialized by one mutex,
// so records are numbered in the order their Append calls acquire it. PutBlob writes its file
// outside that mutex. [Ledger.Records] opens its own read descriptor and re-verifies the file up
// to the head at the time of the call, so it may run while appends continue. No goroutines are
// started.
//
// # Filesystem seam
//
// Every file operation goes through [FS] (OpenFile, Mkdir, Rename, Remove, SyncDir, Lock) and
// [File] (Read, Write, Sync, Truncate, Close); [OSFS] is the real one. Package ledgertest has
// an in-memory FS that simulates power loss and a decorator that injects faults.
package ledger
