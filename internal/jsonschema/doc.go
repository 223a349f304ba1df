// Package jsonschema is rein's JSON Schema: the [Schema] type that tool argument schemas are
// read into and written from, [For] (a schema inferred from a Go type), [Resolve] (every $ref
// bound within the document) and [Resolved.Validate] (a value checked against the draft 2020-12
// vocabulary, with the draft-07 and draft-04 spellings that MCP servers still send).
//
// The contract:
//   - Parsing never fails on a keyword it does not know: unknown keywords are kept in
//     [Schema.Extra] and written back out. A known keyword of the wrong JSON type is an error
//     naming the keyword and where it is — except a property's "required": true, draft 3's
//     spelling, which is kept as an unknown keyword. true and false are schemas (the empty schema and
//     {"not":{}}), and are written back as true and false.
//   - Draft-07 forms are read as they are meant: "items" as an array (with "additionalItems"),
//     "dependencies" (property lists and schemas), "definitions", draft-04 boolean
//     exclusiveMinimum/exclusiveMaximum (folded into the numeric form). "$ref" is applied
//     together with its sibling keywords (as draft 2020-12 says; draft-07 ignored them).
//   - [Resolve] binds "$ref" (and "$dynamicRef", treated as a plain reference) to a subschema of
//     the same document: a JSON pointer ("#/$defs/x", "#/definitions/x", or into an unknown
//     keyword such as "#/components/schemas/x"), an "$anchor", or an "$id" of an embedded
//     resource, relative ids resolved against their base. A reference outside the document is
//     an error naming it: nothing is fetched.
//   - Recursive schemas are fine. What one validation may cost is bounded, since schemas come
//     from MCP servers and values from models: a reference that comes back to itself at the
//     same value is a problem at once, nesting deeper than [MaxDepth] or more than [MaxSteps]
//     subschema applications refuse the value, and at most 100 problems are listed.
//   - A "pattern" (or "patternProperties" key) that Go's regexp package cannot compile
//     (lookaround, backreferences) does not make the schema unusable: "pattern" is then not
//     checked, and such a "patternProperties" entry is not applied but still counts every
//     property name as matched, so additionalProperties refuses nothing for it. [Resolved.Skipped]
//     lists them.
//   - "format", "contentEncoding" and the other annotations never refuse a value.
//   - Validation errors are an *[Error] listing every problem with the instance path (as
//     package strictjson writes paths: "(root)", "edits[0].oldText") and the keyword.
//   - Nothing is built at package load.
package jsonschema
