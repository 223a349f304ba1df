// Package contextpack assembles what a model reads besides the conversation: the system prompt
// (role, tools with their one-line guidelines, date, working directory). Later it also loads
// project context files, skills, compaction summaries and artifact packs.
//
// Assembly is a pure function of its inputs: the same inputs give byte-identical prompts, so
// provider prompt caches stay valid and prompts can be bound by digest.
package contextpack
