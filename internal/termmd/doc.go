// Package termmd renders the markdown a model answers with as terminal rows: headings,
// emphasis, strong and struck text, inline code, fenced code blocks (kept as written, never
// reflowed, not highlighted), bullet and numbered lists (nested), block quotes, links (text
// and URL), horizontal rules and tables (aligned columns, the source rows when too wide).
//
// Guarantees:
//
//   - No row is wider than the width asked for, in terminal cells as
//     github.com/charmbracelet/x/ansi counts them (wide runes, escape sequences); paragraphs
//     are wrapped at spaces, words and code lines longer than a row are cut.
//   - Rendering takes time linear in the text's length (nesting aside, bounded by maxDepth):
//     no backtracking search for closing delimiters.
//   - Colour comes only from the [Theme]'s functions; with a zero Theme and Marks set the
//     rows are plain text that keeps the inline markers (**, *, `, ~~), so nothing is said by
//     colour alone (NO_COLOR).
//   - Text is shown as given: callers make it terminal-safe first (package termtext).
//
// It holds no state and links nothing but the ansi width functions: nothing runs at
// package load.
package termmd
