// Package strictjson parses untrusted JSON strictly. encoding/json (v1) accepts duplicate keys,
// matches object keys to struct fields case-insensitively, replaces invalid UTF-8 and ignores
// some trailing data; for tool arguments, scenario and configuration files, and hook answers
// each of those is a way to smuggle in a value nobody reviewed. This package refuses them all
// and says where the problem is.
//
// [Decode] returns a generic tree (map[string]any, []any, json.Number, string, bool, nil).
// [Unmarshal] decodes into a Go value and additionally requires every object key to be a
// field's exact JSON name. [Options] adds limits for untrusted input: MaxDocumentBytes refuses
// an oversize document (an error wrapping [ErrTooLarge]) before parsing it.
package strictjson
