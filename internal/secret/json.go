package secret

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/refusal"
)

// jsonChunk bounds the pieces [RedactJSON] scans a document in; pieces are cut between
// tokens, at a line break where there is one.
var jsonChunk = 16 << 20

// RedactJSON returns the JSON document doc with every secret [Scan] finds in it replaced by
// "[REDACTED:rule-id]", and the findings (offsets in doc).
//
// The document is scanned as it stands and through its escapes (see [Scan]), so a secret
// split across a key and its value ("password": "…") is found, and so is one hidden behind
// "\n" or "\u0041" or inside a string that holds JSON itself. A secret is replaced in place,
// inside the string that holds it (a finding that runs on past the string's end is cut at
// each string it touches), so the result is valid JSON. An error (code [CodeScanFailed]: doc
// is not valid JSON, or it could not be scanned) means doc must not be emitted.
func RedactJSON(doc string) (string, []Finding, error) {
	if !json.Valid([]byte(doc)) {
		return "", nil, refusal.Errorf(CodeScanFailed, "the text is not a valid JSON document, so it was not scanned and must not be emitted")
	}
	strs := jsonStrings(doc)
	var fs []Finding
	for base := 0; base < len(doc); {
		end := chunkEnd(doc, base, strs)
		chunk, err := Scan(doc[base:end])
		if err != nil {
			return "", nil, err
		}
		for _, f := range chunk {
			f.Start += base
			f.End += base
			fs = append(fs, f)
		}
		base = end
	}
	out := RedactFindings(doc, clampToStrings(fs, strs))
	if !json.Valid([]byte(out)) {
		return "", nil, refusal.Errorf(CodeScanFailed, "the secret scanner failed (redaction broke the JSON document); the text must not be emitted")
	}
	return out, fs, nil
}

// jsonStrings returns the contents (between the quotes) of every string of a valid JSON
// document, keys included, in order.
func jsonStrings(doc string) [][2]int {
	var out [][2]int
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		out = append(out, [2]int{i + 1, j})
		i = j
	}
	return out
}

// chunkEnd is where the piece of doc that starts at base ends: after the last line break
// within jsonChunk bytes (a valid document has line breaks only between tokens), else after
// the last string that ends within them, else at the end of doc (Scan refuses a piece that
// is too large).
func chunkEnd(doc string, base int, strs [][2]int) int {
	limit := base + jsonChunk
	if limit >= len(doc) {
		return len(doc)
	}
	if i := strings.LastIndexByte(doc[base:limit], '\n'); i >= 0 {
		return base + i + 1
	}
	// The first string whose closing quote is at or past limit; the one before it ends
	// inside the piece.
	k := sort.Search(len(strs), func(k int) bool { return strs[k][1] >= limit })
	if k > 0 && strs[k-1][1]+1 > base {
		return strs[k-1][1] + 1
	}
	return len(doc)
}

// clampToStrings cuts each finding to the parts of it that lie inside strings, ordered as
// RedactFindings wants them.
func clampToStrings(fs []Finding, strs [][2]int) []Finding {
	var out []Finding
	for _, f := range fs {
		k := sort.Search(len(strs), func(k int) bool { return strs[k][1] > f.Start })
		for ; k < len(strs) && strs[k][0] < f.End; k++ {
			s, e := max(f.Start, strs[k][0]), min(f.End, strs[k][1])
			if s < e {
				g := f
				g.Start, g.End = s, e
				out = append(out, g)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}
