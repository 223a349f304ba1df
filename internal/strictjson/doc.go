// Package strictjson parses untrusted JSON strictly. encoding/json (v1) accepts duplicate keys,
// matches object keys to struct fields case-insensitively, replaces invalid UTF-8 and ignores
// some trailing data; for tool arguments, scenario and configuration files, and hook answers
// each of those is a way to smuggle in a value nobody reviewed. This package refuses them all
// and says where the problem is.
//
// [Decode] returns a generic tree (map[string]any, []any, json.Number, string, bool, nil).
// [Check] accepts and refuses exactly the same inputs, with the same errors, but builds
// nothing: it allocates only for escaped or very many object keys, for JSON that is kept as
// bytes (ledger lines). [CheckMembers] also shows the top-level object's members as written.
// [Unmarshal] decodes into a Go value and additionally requires every object key to be a
// field's exact JSON name. [Options] adds limits for untrusted input: MaxDocumentBytes refuses
// an oversize document (an error wrapping [ErrTooLarge]) before parsing it.
package strictjson
