// Package system is rein's composition root: it turns resolved options (flags, environment,
// files under $REIN_HOME) into the parts a run is made of — a model adapter wrapped in retries,
// the tool set over a confined workspace, and a recorder — and it owns the on-disk
// configuration files (auth.json, models.json).
//
// Only package cli imports system. Nothing here keeps global state: every function takes what
// it needs, so tests build runtimes side by side.
//
// Secrets: API keys are read from the --api-key flag, then the provider's environment variable,
// then $REIN_HOME/auth.json (which must not be readable by group or others). A key is handed
// to the adapter and never formatted into an error, a log line or status output.
package system
