// Package tool defines what a tool is ([Tool], [Spec], [Result]), the set of tools a session
// offers ([Set]), and strict validation of the arguments a model sends ([Validate]).
//
// The built-in tools live in subpackages: fstool (read, write, edit, ls, find), grep, and shell
// (bash). All file access goes through an [os.Root] workspace so that no path — relative,
// absolute, with "..", or through a symlink — reaches outside it.
//
// Contract:
//   - A [Set] is ordered and immutable; names are unique and non-empty. [Set.Select] fails with
//     an error wrapping [ErrUnknownTool] that names every unknown tool and lists the known ones.
//   - [Validate] (and [ValidateCall], which first runs a tool's optional [Preparer] hook) is the
//     only way arguments reach [Tool.Run]: exactly one JSON object, valid UTF-8, no duplicate
//     keys at any depth, no unknown keys, keys spelled with the schema's case, then the JSON
//     Schema. Every refusal is a *[ValidationError] whose message lists each problem with its
//     path and repeats the arguments, so the model can correct the call. Validation keeps no
//     state but a cache of parsed schemas and is safe for concurrent use.
//   - [Brief] describes a tool by its [Spec.Brief] and its schema without descriptions (for
//     agents whose requests must stay small); what the schema checks is unchanged.
//   - [SchemaFor] derives a tool's schema from a Go struct; every object it describes is closed
//     (additionalProperties false).
//   - Output limits are shared: [MaxLines] lines and [MaxBytes] bytes. [TruncateHead] keeps the
//     beginning and never cuts a line (file reads); [TruncateTail] keeps the end and may keep
//     only the end of an over-long last line (command output). Both return a [Truncation]
//     whose counts a tool turns into a notice and puts in [Result.Details]; [FormatSize]
//     renders sizes for notices ("50.0KB").
package tool
