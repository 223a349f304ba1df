// Package cli is rein's command line: it parses flags, resolves configuration through package
// system, runs the requested mode, and maps every error to a documented exit code ([ExitCode]).
//
// Entry point: [Main] returns the process exit code and writes only to the writers it is given,
// so tests run the whole CLI in-process. A failed run never returns 0.
//
// The JSON event stream (--mode json) and the RPC mode (--mode rpc, package rpc) write the
// versioned event schema of package wire, never a serialization of internal types.
package cli
