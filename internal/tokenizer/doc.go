// Package tokenizer counts the tokens of a text in OpenAI's o200k_base and cl100k_base
// encodings, offline: each encoding's split rule cuts the text into pieces, and byte-pair
// encoding merges each piece by the encoding's ranks. Special tokens are not recognized: a
// text that spells one ("<|endoftext|>") is counted as ordinary text, as the provider counts
// message content. Invalid UTF-8 is read as U+FFFD for each byte that does not begin a valid
// sequence.
//
// The vocabularies are data embedded in the binary (o200k_base.bpe, cl100k_base.bpe: each
// token's bytes in rank order, every one preceded by its length as a uvarint) and are read on
// the first use of their encoding, never at package load. testdata/generate.cjs writes them
// from the reference implementation this package is tested against, together with
// testdata/reference.jsonl: the reference's token count and id hash for each text of a corpus
// of code, prose, scripts, random runs of the characters the split rules tell apart and edge
// cases, which TestAgreesWithTheReference matches in both encodings.
//
// An [Encoding] is safe for concurrent use.
package tokenizer
