// Package jsonenc appends JSON values to a byte slice exactly as encoding/json's Marshal
// writes them: the same bytes, byte for byte, so a type can encode itself by hand without the
// reflection encoders encoding/json builds on a type's first use (0.3–0.5 ms for a session's
// message types in a fresh process, paid on the way to rein's first model request).
//
// [Text] is [String] as an Encoder with HTML escaping off writes it (< > & as themselves), for
// request bodies. The rules reproduced are Marshal's defaults: strings with HTML escaping (< > & as \u003c
// \u003e \u0026), U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD, control bytes
// as \b \f \n \r \t or \u00XX; float64 in the shortest form that round-trips, decimal for
// magnitudes in [1e-6, 1e21) and exponent form outside, NaN and ±Inf refused; []byte as
// padded standard base64, nil as null; json.RawMessage compacted and HTML-escaped, invalid
// JSON refused. A type's encoder built on these must be checked against Marshal by a
// differential test (package jsonenctest fills every exported field of a value by
// reflection, so a field added later and not encoded fails that test).
package jsonenc
