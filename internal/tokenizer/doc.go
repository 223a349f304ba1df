// Package tokenizer counts the tokens of a text in OpenAI's o200k_base and cl100k_base
// encodings, offline: each encoding's split rule cuts the text into pieces, and byte-pair
// encoding merges each piece by the encoding's ranks. Special tokens are not recognized: a
// text that spells one ("<|endoftext|>") is counted as ordinary text, as the provider counts
// message content. Invalid UTF-8 is read as U+FFFD for each byte that does not begin a valid
// sequence.
//
// The vocabularies are data embedded in the binary (o200k_base.bpe, cl100k_base.bpe: each
// token's bytes in rank order, every one preceded by its length as a uvarint) and are read on
// the first use of their encoding, never at package load. TestVocabularies rewrites them with
// -update from the reference implementation this package is tested against, and otherwise
// checks that every token and rank agrees with it; TestAgreesWithTheReference compares token
// ids over a corpus of code, prose, scripts and edge cases.
//
// An [Encoding] is safe for concurrent use.
package tokenizer
