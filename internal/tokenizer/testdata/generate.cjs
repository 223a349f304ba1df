// generate.cjs writes the package's data from the reference implementation of OpenAI's
// encodings (npm package tiktoken 1.0.22, the Rust implementation compiled to WebAssembly):
//
//	../o200k_base.bpe, ../cl100k_base.bpe  every token's bytes in rank order, each preceded by
//	                                       its length as a uvarint (the embedded vocabularies)
//	reference.jsonl                        one line per text of the corpus: the text, and per
//	                                       encoding the number of tokens and the first 16 hex digits of the SHA-256 of the
//	                                       token ids written as decimal numbers joined by ","
//
// Run from this directory: npm install --no-save tiktoken@1.0.22 && node generate.cjs
// The corpus: the edge cases below, texts of random runs of the characters the split rules
// tell apart (a fixed seed), long pieces, and the files named in DOCS as they were when it ran.
"use strict";
const fs = require("fs");
const crypto = require("crypto");
const { get_encoding } = require("tiktoken");

const ENCODINGS = [["o200k_base", 199998], ["cl100k_base", 100256]];
const DOCS = ["../../../README.md", "../../../docs/ARCHITECTURE.md", "../tokenizer.go", "../split.go", "../../contextpack/estimate.go"];

const fixed = [
  "", "hello world", "tiktoken is great!", "你好，世界", "Hello, World! It's a TEST; we'LL see. I'M HERE'S",
  "don't DON'T Don'T 're 'Re 'rE 've 'VE 'm 'M 'll 'LL 'Ll 'd 'D 'x ' 's", "'ſ 'K 'ſt xſ'ſy don'ſ DON'ſ",
  "   leading spaces", "trailing spaces   ", "a  b   c    d", "tabs\t\tand\nnewlines\r\n\r\nmixed \n \n  ",
  "\n\n\n", "   \n", " \t \n \t ", "\n \n !", "\n\t\n\u00a0", "\u00a0nbsp\u2003em\u3000ideographic\u2028line\u2029para\u0085nel\ufeffbom\u200bzw",
  "12345 1234567 1 12 123 ١٢٣٤ ²³ Ⅻ ½", "x=1+2*3/4-5%6", "a/b/c//d /\n/ !!/\r\n/", "path/to/file.go:12:3",
  "émoji 🎉🎉 👩‍👩‍👧 flags 🇩🇪 skin 👍🏽", "naïve café résumé Ärger ÖL Straße ǅungla ǈ", "\u0301\u0301abc \u0301X \u0301",
  "ǅǅǅ ǅa aǅ Aǅb ʰʰ ʰa Aʰ ʰA", "कि स्तान ميزان עִבְרִית ภาษาไทย 한국어 日本語のテキスト", "ΑΒΓ αβγ ΑβΓ Ωmega",
  "CamelCaseIdentifierHTTPServer getHTTPResponseCode XMLHttpRequest iOS macOS", "<|endoftext|> <|fim_prefix|>",
  "\x00\x01\x02 control \x7f \x1b[31mred\x1b[0m", "\ufffd replacement \ufffd\ufffd",
  " ".repeat(300) + "x", "=".repeat(500), "ab".repeat(400), "\n".repeat(200), "é".repeat(200), "🎉".repeat(100),
  "x" + " ".repeat(1000), "a".repeat(3000), "\u0301".repeat(300), "Ab".repeat(300) + "'S",
];

// Runs of the classes: lower, upper, title case, modifier letters, other letters, marks,
// numbers, whitespace, punctuation and symbols, the contractions' letters.
const classes = ["abcxyzß", "ABCXYZ", "ǅǈǋ", "ʰʲˆ々", "あ中ก", "\u0301\u0308\u093f", "0123٣²½Ⅻ",
  " \t\r\n\u00a0\u3000\u0085", "'!?/.,;=-_\"#@€🎉", "sStTrReEvVmMlLdDſK"].map((c) => Array.from(c));
let seed = 0x9e3779b9;
function rand(n) { // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return (((t ^ (t >>> 14)) >>> 0) % n);
}
const random = [];
for (let i = 0; i < 2000; i++) {
  let s = "";
  for (let r = 1 + rand(24); r > 0; r--) {
    const c = classes[rand(classes.length)];
    for (let k = 1 + rand(4); k > 0; k--) s += c[rand(c.length)];
  }
  random.push(s);
}
const docs = DOCS.map((f) => fs.readFileSync(f, "utf8"));

const encs = ENCODINGS.map(([name, size]) => {
  const e = get_encoding(name);
  const parts = [];
  for (let r = 0; r < size; r++) {
    const b = Buffer.from(e.decode_single_token_bytes(r));
    const len = [];
    let l = b.length;
    do { let x = l & 0x7f; l >>>= 7; if (l) x |= 0x80; len.push(x); } while (l);
    parts.push(Buffer.from(len), b);
  }
  let past = true;
  try { e.decode_single_token_bytes(size); } catch (err) { past = false; }
  if (past) throw new Error(name + " has a token past " + size);
  fs.writeFileSync("../" + name + ".bpe", Buffer.concat(parts));
  return [name, e];
});

const lines = [];
for (const text of [...fixed, ...random, ...docs]) {
  const line = { text };
  for (const [name, e] of encs) {
    const ids = Array.from(e.encode_ordinary(text));
    line[name] = [ids.length, crypto.createHash("sha256").update(ids.join(",")).digest("hex").slice(0, 16)];
  }
  lines.push(JSON.stringify(line));
}
fs.writeFileSync("reference.jsonl", lines.join("\n") + "\n");
console.log("wrote", lines.length, "texts");
