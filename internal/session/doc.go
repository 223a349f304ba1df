// Package session keeps an agent conversation durable on a [ledger]: one ledger file per
// session holding, under one monotonic seq,
//
//   - the tree: entries (messages) linked by parent id. A user or assistant message's parent is
//     the lane's leaf when it was recorded; a tool result's parent is the assistant message
//     whose call it answers. The tree only grows;
//   - lanes: a name and a leaf (the tip of the conversation the lane continues), plus at most one
//     open run per lane (a second open run in a lane is corruption);
//   - global facts: string keys, latest write wins (the session name is the fact "name");
//   - intents and their settlements: the durability protocol below.
//
// Durability. [Session] implements kernel.Recorder. Before an effect (a model call, a tool
// run) the kernel records an intent naming the entry ids its result will use; the intent
// record is fsynced before Intend returns. The result is then recorded as an entry with
// exactly a reserved id; it rides on the next fsync (group commit): the next intent's, the
// run's end (EndRun), Sync or Close — two fsyncs per tool turn (the tool's intent, the next
// model call's) instead of four. Nothing outside the process acts on a result before one of
// those, so a result is durable before anything depends on it, or a power loss drops it with
// everything after it and Recover treats its intent as an effect of unknown outcome (below).
// The run start and facts deferred to a turn boundary ride the same way; facts set outside a
// run are fsynced. An entry id reserved by one intent can be materialized once, by that intent
// only; anything else found on open is corruption. TestPowerLossMatrix checks this over every
// state a power loss can leave in a multi-turn session.
//
// Checked writes. Every write checks its records before a byte is written, with the same
// rules Open applies (one implementation, the reducer's apply, run on each record as the ledger
// builds it): a record they refuse — a settlement with ids its intent did not reserve, a result
// for an unknown or already answered call, a reused id — is refused with [ErrInvalidRecord] and
// nothing of its write reaches the ledger, so a session can always be reopened. A settlement's
// entries are written as one unit (one write, one fsync).
//
// Recovery ([Session.Recover]) settles every open intent exactly once:
//   - a tool call is re-run only if it was declared replay-safe when it started and its tool
//     is still declared safe now; otherwise it gets a synthetic "interrupted" result the model
//     sees; a cancelled call gets an "aborted" result and is never re-run;
//   - a model call is closed as abandoned and retried by the next run while its logical call
//     has attempts left (see Attempts below); at its last attempt it is settled with a
//     synthetic error message.
//
// Recovery writes one record per open intent, so running it twice is the same as once.
//
// Attempts. Every request to the model is preceded by a durable record: a model-call intent
// for the first attempt a process makes, an attempt record ([Session.Attempt],
// kernel.AttemptRecorder) for each retry within the process, written after the backoff wait
// and before the request. A logical call is every attempt at answering the same context: its
// count runs from the first model-call intent after the lane's last entry that changed the
// context (a user message or compaction summary, an answer, a tool result) — a failed or
// aborted answer, a crash and a recovery do not end it — whatever process made the attempts. Its
// limit is the retry policy recorded by its first intent (Options.Retry then; a later process's
// policy does not change it). Once the limit is reached the call stays given up: Intend
// refuses another model-call intent with a *kernel.GaveUpError and [Session.GaveUp] reports
// it, until a new entry (a new prompt) starts a new call.
//
// Cancel ([Session.Cancel]) records a durable cancel record for the lane's open intents
// before the caller signals anything.
//
// Deferred writes. Facts set and messages queued while a turn is in flight are held until the
// turn boundary (the next model call of the lane), so the provider context of a lane only
// grows at the tail and never changes under a running request.
//
// Format. Record kinds and bodies are this package's own versioned types (FormatVersion);
// messages are stored in llm.Message's JSON encoding. Golden ledgers (testdata/golden, written
// through this API with a fixed clock and ids, and read back field by field) pin every record
// kind and field, so a renamed tag in llm or here fails the tests. A payload above
// [BlobThreshold] — a message's encoding, the tool call of an intent, a fact's value — is
// stored in the ledger's blob store and referenced by digest (checked on every read), so no
// record reaches the ledger's line cap.
//
// Tool-call ids. An answered assistant entry whose calls lack an id or share one is refused:
// its calls could not each get one result. [Session.CallIDUsed] (kernel.CallIDs) tells the
// kernel which ids the session has used, so that it replaces a reused provider id.
//
// Identity: [Options.ID] and [LoadAs] name the session a directory must hold; a ledger whose
// header names another (one copied from elsewhere) is refused as corrupt.
//
// Concurrency: a Session is safe for concurrent use; every write goes through one mutex and the
// ledger's single append queue.
package session
