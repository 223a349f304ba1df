// Package system is rein's composition root: it turns resolved options (flags, environment,
// files under $REIN_HOME) into the parts a run is made of — a model adapter wrapped in error
// redaction (package llm/redact, with the key in use) and retries, the role's tool set over a
// confined workspace, the permission gate, hooks, telemetry and the session — and it owns the
// on-disk configuration files (auth.json, models.json, settings.json, trust.json).
//
// One way to build and run an agent: every agent rein runs (print and JSON mode, RPC,
// compaction, the demo, each delivery-run stage attempt through [Agents]) is built by [Build]
// from [Options] and driven through the lifecycle of [Runtime]: [Open] (create or open, recover
// and report what was settled), [Runtime.Begin] / [Runtime.Run] / [Runtime.Continue] (the run's
// begin record, the loop, a durable cancel before the signal, the end record with its status),
// [Runtime.Close] (session_end hooks, ledger and lock, workspace, spill files). A new session is
// created only after the trust gate and the configuration passed, and removed again when a
// later step fails.
//
// Trust and permissions: settings are read strictly from $REIN_HOME/settings.json and, once
// the project is trusted, from <project>/.rein/settings.json (rule lists concatenate, global
// first); under them, leniently, Claude Code's ~/.claude/settings.json and, once trusted, the
// project's .claude/settings.json and .claude/settings.local.json (claudesettings.go: rules
// mapped by policy.FromClaude, unimplemented keys warned about, never fatal). The project trust gate (--trust/--no-trust, then trust.json, then trust.mode)
// decides whether the project's own rein files load; a project holding none needs no
// decision. A stored allow records the digests of the guarded files (trustdigest.go) and holds
// only while they match: a file added, edited or removed since is asked about, or refused
// with ErrTrustRequired, naming it. With --sandbox, openSandbox protects, besides
// sandbox.DefaultProtect, what the repository's git configuration names inside the workspace
// (gitProtected: the hooks directory, included configuration files, driver programs). The
// kernel's Gate is the permission rules of package policy: deny refuses, ask
// asks through Options.Confirm or — with none — refuses so the run ends blocked.
//
// Read scopes: an agent built with Options.Reads (a delivery stage's input boundary,
// agentspec.ReadScope) has its workspace Guard bounded by it ahead of the permission rules
// (scopeGuard, readscope.go): an allowlist of files or deny paths, judged on real paths, with
// hard-linked files refused and a refusal the model sees (CodeReadOutOfScope). A scope on a
// tool set with bash is a configuration error, since bash's reads pass no Guard.
//
// Hooks: the command hooks of the settings (global, then the trusted project's) are wired into
// every agent Build makes, per agent (hookWiring), so that an agent for another session gets
// its own, recording its hook runs in its own session. Hook failures and messages reach the
// user through Options.Notice.
//
// Session integrity: opening an existing session refuses a ledger whose header names another
// session than the directory holds ([SessionIDOf]) and one rolled back behind its anchor
// ([CheckAnchor], kept in $REIN_HOME/anchors, outside the session's directory); the anchor
// advances at each run end and at Close. A ledger file removed or replaced while the session is
// open fails the run ([ErrSessionGone]).
//
// Only package cli imports system. Nothing here keeps global state: every function takes what
// it needs, so tests build runtimes side by side.
//
// Secrets: API keys are read from the --api-key flag, then the provider's environment variable,
// then $REIN_HOME/auth.json (which must not be readable by group or others). A key is handed
// to the adapter and never formatted into an error, a log line or status output.
package system
