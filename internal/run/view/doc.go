// Package view renders delivery-run artifacts for a person and compares the rendered forms:
// what `rein run show`, `rein run diff` and an interactive `rein run approve` print.
//
// # Rendered form
//
// [Render] prints a header, then the body. The header names the artifact's id, path, digest
// and file digest as the run ledger recorded them, what made it (stage and attempt), the
// frontmatter's other fields (type, schema version, run, created) and the inputs it was made
// from, each with its digest. When the file's bytes no longer have the recorded digests the
// header says so, with both digests.
//
// Body text outside a fenced JSON block is printed as written. A JSON block (the contract or
// the facts of the artifact) becomes sections: a "## Heading" per top-level key (camelCase
// keys are spelled as words), scalars as text (true/false as yes/no, null and empty lists as
// "(none)"), lists as "- " bullets, nested objects as indented "key: value" lines. A string
// under a key named references or …References is a reference id: it is printed with the digest
// of the run's artifact of that id, or marked as naming no artifact of the run. Object keys
// keep the order they have in the file. A block that is not valid JSON is printed as written,
// with a note. A string's second and later lines are indented below its first, so no value can
// start a line at the left margin and pass for a heading.
//
// Every byte of the result has passed termtext.Visible: an escape sequence, carriage return,
// bidi override or invalid byte in an artifact is shown as a visible escape, never sent to the
// terminal as is. [Raw] is the file's bytes made safe the same way.
//
// # Diffs
//
// [Diff] is a line-based unified diff (3 lines of context) of two rendered forms, computed with
// linediff's minimal line diff (the one the edit tool's diffs use too).
// Both sides are already safe for a terminal, so is the diff.
//
// The package reads and writes nothing: it works on bytes its caller read.
package view
