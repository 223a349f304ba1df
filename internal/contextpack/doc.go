// Package contextpack assembles what a model reads besides the conversation: the system
// prompt, made of rein's default prompt (or the project's .rein/SYSTEM.md), APPEND_SYSTEM.md,
// the project context files (AGENTS.md, CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md,
// ~/.claude/CLAUDE.md, with their @path imports: see memory.go), an index of Agent Skills
// (parsed leniently where the client guidance says warn and load: [ParseSkill]; the skills of
// the installed Claude Code plugins the caller names in [Inputs].Plugins too, as PLUGIN:NAME), the date and
// the working directory; and compaction ([Compactor]). Later it also holds artifact packs.
//
// Two steps keep assembly testable: [Load] finds and reads the files (bounded, each capped at
// [MaxFileBytes]; it never fails: whatever is skipped or cut becomes a diagnostic), and
// [Assemble] renders them with the explicit [Inputs]. Assemble reads nothing and is
// deterministic: the same inputs give byte-identical prompts, so provider prompt caches stay
// valid and prompts can be bound by digest. The result is structured: an [Assembly] lists
// each section with its source file, bytes and estimated tokens, and its Prompt is exactly the
// concatenation of the sections' texts.
//
// Trust: project files that configure or extend rein (.rein/SYSTEM.md, .rein/APPEND_SYSTEM.md,
// .rein/skills/, .agents/skills/, .claude/skills/, and files a project context file imports
// from outside the project) load only when Inputs.ProjectTrusted is set; context files
// load unless Inputs.GateContextFiles puts them behind the same gate. What the gate kept out
// is listed (Sources.Untrusted), never read. Deciding trust is the caller's business.
// Project files must resolve inside the repository root (no symlink escape).
//
// Token estimates go through the consumer-side [Estimator]: OpenAI's tokenizers (compiled-in
// vocabularies) for OpenAI models, ceil(bytes/4) ([Bytes4]) elsewhere. They are estimates;
// a provider's reported usage wins.
package contextpack
