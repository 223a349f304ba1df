// Package internal_test enforces rein's dependency rules (docs/ARCHITECTURE.md, "Dependency
// rules") on the real import graph, as `go list` reports it, in the style of tailscale's
// tstest/deptest: a table of rules, each binding packages (or a binary) to a list of forbidden
// imports with the reason. A rule that binds no package fails, so renaming a package cannot
// switch its rule off. The rules section of docs/ARCHITECTURE.md is generated from this table
// (TestArchitectureDoc).
//
// A rule broken here is a design change: change the rule, its reason and the doc together.
package internal_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// rules are rein's dependency rules. Patterns: "./x" is this module's package x, "./x/..." it
// and everything below; other patterns are import paths (see parsePattern).
var rules = []rule{
	{
		pkgs:   []string{"./internal/kernel/..."},
		forbid: []string{"net", "net/http/...", "golang.org/x/term/...", "charm.land/...", "github.com/charmbracelet/...", "go.temporal.io/..."},
		reason: "The agent loop is headless: it runs the same under print, JSON and RPC modes, a terminal UI or a workflow worker, and in tests without a network, so it links no network, terminal, UI or workflow-engine code.",
	},
	{
		pkgs: []string{"./internal/kernel/..."},
		forbid: []string{"./internal/llm/...", "./internal/tool/fstool/...", "./internal/tool/grep/...", "./internal/tool/shell/...",
			"./internal/ledger/...", "./internal/system/...", "./internal/cli/..."},
		allow:  []allowed{{"./internal/llm", "the provider-neutral types are the loop's vocabulary"}},
		reason: "The kernel declares the small interfaces it consumes (llm.Model, Recorder, Gate, Hooks, Inbox) and is handed their implementations: provider adapters, concrete tools, the ledger and the composition root are never the loop's choice.",
	},
	{
		pkgs:   []string{"./internal/kernel/..."},
		forbid: []string{"./internal/policy/...", "./internal/secret/...", "./internal/command/...", "./internal/sandbox/..."},
		reason: "Permission decisions reach the loop only through its Gate, and confinement only through the tools it is given: the loop is the same with or without rules, secret scanning, approved commands or a sandbox.",
	},
	{
		pkgs: []string{"./internal/ledger/..."},
		forbid: []string{"./internal/llm/...", "./internal/tool/...", "./internal/kernel/...", "./internal/session/...",
			"./internal/tui/...", "./internal/rpc/..."},
		reason: "The ledger is the durable format under sessions, delivery runs and loops: hash-chained records with opaque bodies. It knows no messages, tools, loop or interface, so everything can build on it and the format does not move with them.",
	},
	{
		pkgs:   []string{"./internal/llm/..."},
		except: []string{"./internal/llm", "./internal/llm/llmtest/..."},
		forbid: []string{"./internal/kernel/...", "./internal/session/...", "./internal/tool/..."},
		reason: "A provider adapter (every package under internal/llm/ but the conformance suite llmtest, a new one included) translates provider-neutral requests to one provider's wire and back; it knows no loop, session or tool, and passing llmtest is all it must do.",
	},
	{
		pkgs:   []string{"./internal/llm"},
		forbid: []string{"./internal/llm/..."},
		reason: "The provider-neutral types come first: adapters depend on them, never the other way, so adding or removing a provider changes nothing that uses llm.",
	},
	{
		pkgs:   []string{"./..."},
		except: []string{"./internal/cli/...", "./internal/system/..."},
		forbid: []string{"./internal/system/..."},
		direct: true,
		reason: "system is the composition root, the one place that turns configuration into concrete parts and builds agents; only the command line asks it, so no package assembles an agent of its own (run gets its agents through an interface it declares).",
	},
	{
		pkgs:   []string{"./..."},
		except: []string{"./cmd/rein-worker/..."},
		forbid: []string{"go.temporal.io/..."},
		reason: "A workflow engine is for scale-out only: rein and every package it is built from stay free of it; only a separate worker binary (none yet) may link it.",
	},
	{
		pkgs:   []string{"./cmd/rein"},
		forbid: []string{"google.golang.org/grpc/...", "google.golang.org/protobuf/...", "github.com/golang/protobuf/..."},
		reason: "The rein binary speaks JSON over HTTP to providers, JSON lines to its clients and OTLP/HTTP, protobuf or JSON, to trace collectors through its own encoders; a gRPC or protobuf module would add megabytes and a large dependency tree for nothing rein needs (linking the OTLP/HTTP exporter module measured +4.0 MB and +200 KB, 1,470 allocations at every start). Tests may decode with the official OTLP types. One that must come in gets an allow entry saying why.",
	},
	{
		pkgs:   []string{"./cmd/rein"},
		forbid: []string{"github.com/google/jsonschema-go/..."},
		reason: "Tool schemas are parsed, inferred, resolved and validated by rein's own package jsonschema: the library's package initializer allocated 81 KB in 296 objects (0.3 ms) and its pages cost ~73 faults at every start. Tests may still link it through the MCP reference SDK they run servers with.",
	},
	{
		pkgs: []string{"./internal/tui/..."},
		forbid: []string{"./internal/system/...", "./internal/llm/...", "./internal/tool/...", "./internal/session/...",
			"./internal/ledger/...", "./internal/policy/...", "./internal/rpc/..."},
		allow:  []allowed{{"./internal/llm", "the UI sends user messages and reads the conversation in the provider-neutral types"}},
		direct: true,
		reason: "The terminal UI renders the wire event stream and drives the session lifecycle through the small interface it declares; the agent comes from the composition root through package cli, so the UI has no path of its own to a model, a tool, the permission rules or the ledger.",
	},
	{
		pkgs:   []string{"./internal/tool/fstool/..."},
		forbid: []string{"mvdan.cc/sh/...", "./internal/sandbox/..."},
		reason: "The file tools confine paths with os.Root and the protected-path matcher; they link neither the shell parser nor the sandbox, which only the bash tool and approved commands need.",
	},
	{
		pkgs:   []string{"./internal/run/..."},
		forbid: []string{"./internal/tool/fstool/...", "./internal/tool/grep/...", "./internal/tool/shell/...", "./internal/llm/..."},
		allow:  []allowed{{"./internal/llm", "stage attempts read the provider-neutral messages and usage"}},
		reason: "A delivery run asks the composition root for every stage's agent through an interface it declares, so a stage attempt gets the model retries, tool surface, permission gate, hooks, telemetry and session lifecycle of any other agent; run links no concrete tool, provider adapter or the script model.",
	},
	{
		pkgs:   []string{"./internal/mcp/..."},
		forbid: []string{"./internal/kernel/...", "./internal/session/...", "./internal/ledger/...", "./internal/policy/...", "./internal/hooks/..."},
		reason: "MCP tools are plain tool.Tools: validation, permission rules, hooks, intents and recovery come from the kernel and the composition root as for the built-in tools, so the MCP client links none of them and its tools cannot take a path of their own.",
	},
	{
		pkgs:   []string{"./internal/loop/..."},
		forbid: []string{"./internal/tool/fstool/...", "./internal/tool/grep/...", "./internal/tool/shell/...", "./internal/llm/...", "./internal/run/..."},
		allow:  []allowed{{"./internal/llm", "rounds read the provider-neutral messages and usage"}},
		reason: "A loop asks the composition root for every round's agent through an interface it declares, so a round gets the model retries, tool surface, permission gate, hooks, telemetry and session lifecycle of any other agent, with the loop's human gate added through the spec; loop links no concrete tool, provider adapter, the script model or the delivery-run engine.",
	},
	{
		pkgs: []string{"./internal/worktree/..."},
		forbid: []string{"./internal/run/...", "./internal/ledger/...", "./internal/artifact/...", "./internal/session/...",
			"./internal/kernel/...", "./internal/llm/...", "./internal/tool/..."},
		reason: "Ticket worktrees, candidates and integration are git mechanics under the ticket stages: the run engine records what worktree returns and decides what its refusals mean, so worktree knows no run, ledger, artifact, session, model or tool and is tested on real git alone.",
	},
	{
		pkgs:   []string{"./cmd/rein"},
		forbid: []string{"github.com/aymanbagabas/go-udiff/..."},
		reason: "The edit tool's diffs and `rein run diff` use rein's own line diff (internal/linediff): go-udiff compiles a regular expression in its package initializer, paid at every start (0.11–0.20 ms of `rein --version`) for a patch parser rein never calls. Tests may still link it through their golden-file helpers.",
	},
	{
		pkgs:   []string{"./cmd/rein"},
		forbid: []string{"go.opentelemetry.io/...", "github.com/go-logr/..."},
		reason: "Spans are made, sampled, batched and exported by package telemetry itself: with tracing off (the default) the OpenTelemetry SDK's 16 packages still ran their initializers at every start (0.29 ms, 140 allocations) and made the binary 1.1 MB larger. Tests may decode exports with the official OTLP types.",
	},
}

// load reads the import graph of every package of the module and of everything they link.
func load(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := graph{imports: map[string][]string{}, deps: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("go list printed %q, not three tab-separated fields", sc.Text())
		}
		g.imports[f[0]] = strings.Fields(f[1])
		if isOwn(f[0]) {
			g.deps[f[0]] = strings.Fields(f[2])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(g.deps) < 20 {
		t.Fatalf("go list found only %d packages of the module; the rules would check almost nothing", len(g.deps))
	}
	return g
}

func TestDependencyRules(t *testing.T) {
	rep := check(rules, load(t))
	for _, n := range rep.notes {
		t.Log(n)
	}
	for _, f := range rep.failures {
		t.Error(f)
	}
}
