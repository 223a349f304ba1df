// Package system is rein's composition root: it turns resolved options (flags, environment,
// files under $REIN_HOME) into the parts a run is made of — a model adapter wrapped in retries,
// the tool set over a confined workspace, the permission gate, and a recorder — and it owns
// the on-disk configuration files (auth.json, models.json, settings.json, trust.json).
//
// Trust and permissions: settings are read strictly from $REIN_HOME/settings.json and, once
// the project is trusted, from <project>/.rein/settings.json (rule lists concatenate, global
// first). The project trust gate (--trust/--no-trust, then trust.json, then trust.mode)
// decides whether the project's own rein files load; a project holding none needs no
// decision. The kernel's Gate is the permission rules of package policy: deny refuses, ask
// asks through Options.Confirm or — with none — refuses so the run ends blocked.
//
// Hooks: the command hooks of the settings (global, then the trusted project's) are wired into
// every agent Build makes, per agent (hookWiring), so that an agent for another session gets
// its own, recording its hook runs in its own session. Hook failures and messages reach the
// user through Options.Notice.
//
// Only package cli imports system. Nothing here keeps global state: every function takes what
// it needs, so tests build runtimes side by side.
//
// Secrets: API keys are read from the --api-key flag, then the provider's environment variable,
// then $REIN_HOME/auth.json (which must not be readable by group or others). A key is handed
// to the adapter and never formatted into an error, a log line or status output.
package system
