// Package artifact holds the digest-bound inputs of delivery runs: artifact files (markdown with
// YAML frontmatter), their normalization and digests, a content-addressed store, packs of
// references that are verified when opened, the deterministic rendering of a pack into request
// text, and staleness over a graph of what was made from what.
//
// It imports no kernel, session, provider, CLI or composition package; it reads files only
// through [os.Root].
//
// # Artifact files
//
// An artifact file is UTF-8 text. When its first line (after the steps 2 and 3 below) is "---",
// the lines up to the next "---" line are its frontmatter, which must be one YAML mapping
// (possibly empty) without duplicate keys; the rest is its body. A file whose first line is not
// "---" has no frontmatter and is all body (so a file without frontmatter cannot start with a
// "---" line: it would be read as the start of frontmatter). [Parse] checks only that the frontmatter is a
// mapping; [Artifact.DecodeFrontmatter] decodes it into a schema strictly (unknown keys refused).
//
// # Normalization, version 1 ([NormalizationVersion])
//
// The digest of an artifact covers its normalized body. From the file's bytes:
//
//  1. The bytes must be valid UTF-8 (else [ErrMalformed]).
//  2. One UTF-8 byte order mark (EF BB BF) at the very start is removed.
//  3. Line endings become LF, in one left-to-right scan: CR LF becomes LF, any other CR becomes
//     LF.
//  4. The text is split into lines at LF (a final LF ends the last line, it does not start an
//     empty one), and the frontmatter is split off as described above. A delimiter line is one
//     that is exactly "---" once trailing spaces and tabs are removed. An opening delimiter
//     without a closing one is [ErrMalformed].
//  5. From every body line, trailing U+0020 SPACE and U+0009 TAB characters are removed.
//  6. Empty lines at the start and at the end of the body are removed.
//  7. Every remaining line is terminated by exactly one LF. A body with no remaining line
//     normalizes to zero bytes.
//
// Nothing else changes: no Unicode normalization (NFC and the like), no change to leading
// whitespace, tabs inside lines, other Unicode spaces (U+00A0, U+3000) or other line
// separators (U+2028, U+0085), and interior empty lines are kept, however many.
//
// Why these rules. The digest must survive what tools and platforms do to a file without
// anyone meaning to change it — editors adding or removing a BOM, Git converting line endings,
// editors trimming trailing whitespace and fixing the final newline, a writer putting a blank
// line after the frontmatter or not — and must change with anything a reader could see. Every
// step is on bytes, is idempotent, and can be reproduced with standard tools. Unicode
// normalization is left out on purpose: it depends on the Unicode version of the tables, so a
// library update could silently change digests, and canonically equivalent spellings are rare
// in artifacts. Markdown's "two trailing spaces" hard break is lost by step 5; write a
// backslash at the end of the line instead. Invalid UTF-8 is refused rather than replaced
// because a request's JSON encoding would replace it, so the model would read bytes other than
// the digested ones. Any change to these rules is a new NormalizationVersion, recorded with the
// run (the execution lock's artifact schema version); digests from different versions are not
// comparable.
//
// # Digests
//
// Every digest is written "sha256:" followed by 64 lowercase hexadecimal characters ([Digest]).
//   - digest: the sha256 of the normalized body. Frontmatter does not enter it: editing only
//     the frontmatter (or only line endings, trailing whitespace, the BOM or the final newline)
//     keeps the digest; editing body text changes it.
//   - fileDigest: the sha256 of the file's bytes exactly as stored. Every edit changes it.
//
// # Store
//
// [Store] is content-addressed: the blob with digest sha256:<hex> is <dir>/sha256/<hex[:2]>/<hex>
// and holds exact bytes (so an artifact file stored whole is found under its fileDigest).
// [Store.Put] returns only when the blob is durable: temporary file in the blob's directory,
// fsync, rename into place, fsync of the directory (and of the parent of any directory it
// created). [Store.Get] verifies the content on every read: a mismatch is a [*CorruptError]
// ([ErrCorrupt]); a missing blob is [ErrNotFound].
//
// # References and packs
//
// A [Reference] is {id, path, digest, fileDigest}. Its path is relative to the allowed roots,
// slash-separated and canonical (no "." or ".." element, no empty element, no trailing slash,
// no backslash or NUL); an absolute path or one that climbs out is [ErrOutsideRoots]. A [Pack]
// is an ordered list of references with unique ids and an optional name and version.
//
// The pack digest is the sha256 of the pack's canonical JSON ([Pack.Canonical]), which is the
// RFC 8785 (JSON Canonicalization Scheme) form of the pack object, so any JCS implementation
// reproduces it. Concretely, in UTF-8 with no whitespace outside strings:
//
//	{"name":N,"references":[R,...],"version":V}
//
// where "name" and "version" are left out when empty, "references" is always present (possibly
// []) and keeps the pack's order, and each R is
//
//	{"digest":D,"fileDigest":F,"id":I,"path":P}
//
// Keys appear in this (sorted) order. Strings are written with '"' and '\' escaped, the control
// characters U+0000..U+001F escaped (\b \t \n \f \r, the others as \u00xx in lowercase hex),
// and every other character as its own UTF-8 bytes (no escaping of '<', '>', '&', U+2028 or
// non-ASCII). [ParsePack] accepts any JSON spelling of a pack (strictly: no unknown or
// duplicate keys); the digest is always taken over the canonical form.
//
// # Opening a pack
//
// [Open] resolves every reference path against the allowed roots in order (the first root that
// holds the path serves it), through [os.Root], so a symbolic link leading outside its root —
// including one swapped in after the pack was built — is refused. It reads every file (regular
// files only, at most [MaxFileBytes]), recomputes both digests and compares them with the
// reference. Either every reference verifies and the [OpenedPack] holds the verified bytes, or
// the call returns no pack and a [*PackError] listing every failing reference as a
// [*ReferenceError] (index, id, path, sentinel, cause, and for [ErrMismatch] the wanted and
// found digests). The sentinels: [ErrInvalidReference], [ErrOutsideRoots], [ErrMissing],
// [ErrNotRegular], [ErrUnreadable], [ErrTooLarge], [ErrMalformed], [ErrMismatch]. [Build] makes
// a pack from files by the same reading rules.
//
// # Rendering, version 1 ([RenderVersion])
//
// [Render] turns an opened pack into request text, a pure function of the pack (same pack, same
// bytes). Attribute values are JSON strings in the canonical form above; counts are decimal:
//
//	<artifact-pack digest="sha256:…" name="…" version="…" count="N">
//	<artifact id="…" path="…" digest="sha256:…" fileDigest="sha256:…" bytes="B">
//	…normalized body, B bytes, each line ending in LF…
//	</artifact digest="sha256:…">
//	… one section per reference, in pack order …
//	</artifact-pack digest="sha256:…">
//
// name and version are left out when empty; the text ends with LF. The body is the normalized
// body — the bytes the digest covers — and not the frontmatter. The closing line of a section
// repeats the artifact's digest, which its own body cannot practically contain, and "bytes"
// gives the body's exact length, so a body that imitates a delimiter cannot end its section
// early for a reader that checks either.
//
// # Staleness
//
// A [Graph] records, for each artifact, the digest it had and the digests of the inputs it was
// made from, and the approvals with the digests approved. [Graph.Check] takes the current
// digests: an artifact is stale when an input's current digest differs from the one it was made
// from, or when an input is itself stale — so one change marks everything downstream stale,
// transitively. An approval holds only while the approved id still has the approved digest and
// is not stale. An id with no current digest counts as changed (fail closed). Results are sorted
// by id.
package artifact
