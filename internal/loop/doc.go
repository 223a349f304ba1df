// Package loop is rein's external loop (README, "Loops"): it decides, from a control
// contract and evidence — never from what a model says — whether to run another round, what
// a round may do, what proves completion and when to stop.
//
// # The control contract
//
// A YAML file with six fields (trigger, goal, verification, stop {success, failure, budget},
// memory {persist, exclude}, human_gate {required_for, timeout}), decoded by internal/strictyaml
// (unknown and duplicate keys, anchors, aliases and merge keys refused, every problem naming
// file:line) and validated ([ParseContract]); the result is [Normalized], whose digest is the
// sha256 of its canonical JSON (comments and layout do not change it). Verification entries
// are {id, run: [argv]} (no shell) or {id, delivery_run: delivery-ready}: the goal is then the
// delivery run [StartOptions].Run names (goalrun.go: [Env].Runs drives it, a round advances it
// by one stage, the check is its state). stop.success is "all verification passes";
// stop.failure "same root cause fails N times" (optionally "in a row").
//
// # The loop ledger and states
//
// [Start] creates $REIN_HOME/loops/<id>/ (ledger type loop, common ledger format) whose header
// binds the contract digest, and records loop.started (contract file, workspace, the
// normalized contract, trigger, model — never a key). States: ready, running (a live lease),
// waiting_for_human, blocked, completed, and aborted ([Abort]). Records: loop.state
// {state, reason, detail} for transitions outside a round; loop.trigger; round.started
// {round, key} (key: [RoundKey]); loop.checkpoint and round.ended {round, state, reason, detail, claim, verification,
// gates, tokens, costUsd, elapsedMs, session} written together (one AppendAll, one fsync);
// gate.decided; budget.raised {old, new, approver}; loop.lease.taken_over. Every record is
// fsynced before the command reports it. [Status] opens the ledger read-only and writes
// nothing anywhere.
//
// # Before a round
//
// [Run] holds the loop's lease (internal/lease) and, before every round, in this order:
// refuses a completed or aborted loop (ErrFinished); compares the contract file's digest with
// the locked one (a difference records blocked contract_drift once; the file restored records
// ready drift_lifted); closes a round a crash left open (round.ended, reason interrupted);
// closes an interrupted approval (settleApprovals); keeps a loop waiting for a person (or blocks it, gate_timeout, once human_gate.timeout has
// passed since the round ended); keeps a blocked loop blocked; checks every budget (rounds
// started, tokens, cost, the rounds' summed elapsed time) and records blocked
// budget_exhausted naming the one used up. [History] lists the transitions and checkpoints.
//
// # Drift, relock and resume
//
// A changed contract file is drift: [Relock] adopts it, a contract.relocked record
// ([Amendment]: digests, approver, changed fields, budget and gate changes) after which the
// amended contract is the one in force; restoring the file lifts drift too; either returns the
// loop to its state before the drift. Before every round the resume steps are taken and
// recorded in order (loop.resumed: trigger, artifacts, scope, preconditions). A round a crash
// left open is closed by rein's verification with a checkpoint ([closeInterrupted]; a
// delivery-run goal's round as the run's state says, so the loop agrees with the run), gate
// holds are recorded when held (gate.held) and approvals before their action (gate.approving),
// so a SIGKILL anywhere neither repeats a round against one checkpoint nor an approved action.
//
// # Identical retries
//
// Before round.started, the round's [RoundKey] is computed from the view alone: its inputs
// digest (the contract digest, the latest checkpoint less what only numbers a round — its
// round, the root causes' round lists, output tails — or, when stale, the workspace's new
// tree digest, and the evidence: the last round's failing check ids with fingerprints,
// whether its claim was contradicted, the gate decisions since), its planned action (the
// checkpoint's nextStep, from the last rein_loop_report) and its expectation (a digest of the
// checkpoint's openItems and the root causes that must stop failing). A key equal to that of
// an earlier round whose verification failed is an identical retry: the round is not run and
// the loop records blocked identical_retry naming that round (the loop design: a recoverable failure
// whose identical retry is refused; blocked, because nothing but an outside change could make
// the same round go differently). Such a loop is looked at again by the next run: still
// identical, it stays blocked without a new record; different (a person changed the
// workspace), ready retry_lifted is recorded and the round runs. [Raise] records a new budget with its approver and
// makes a loop blocked by its budget ready again.
//
// # A round
//
// Each round is an agent built by the composition root from an agentspec.Spec ([Env].Agents):
// a fresh session under the loop's directory, the default role's tools plus
// rein_loop_report, and the loop's human gate as Spec.Gate. Its first request carries the
// contract, the latest checkpoint and this round's evidence (the last round's failing checks
// with fingerprints and redacted output tails, whether its claim was contradicted, gate
// decisions) — never an earlier round's transcript. When the workspace's tree digest differs
// from the checkpoint's, the context is stale: loop.state ready stale_context is recorded and
// the request carries no conclusions of the checkpoint.
//
// After the agent ends, rein runs every verification itself (internal/command: no shell,
// the process runner) and the next state is chosen by code ([decide]): a held gate →
// waiting_for_human; the model failing → blocked model_failed; every check passing →
// completed; the failure rule met on fingerprints → blocked same_root_cause; otherwise ready
// (claim_contradicted when the model reported done, else verification_failed).
//
// # Root causes
//
// [Fingerprint] is the check's id and its normalized failure output: failing test names,
// then error lines (or the last lines), with paths reduced to base names and line numbers,
// timestamps, durations and addresses stripped.
//
// # Checkpoints
//
// After every round: the round, the contract digest, completed scope, decisions, the
// workspace tree digest, verification results with fingerprints, root causes with their
// rounds, open items and the next step — less every memory class memory.exclude names (or
// persist leaves out). Secrets and raw credentials are always excluded: the checkpoint's JSON is
// secret-scanned and a finding (or a failed scan) refuses writing it; the round then ends
// blocked checkpoint_secret, its end recorded without the checkpoint.
//
// # Human gates
//
// human_gate.required_for compiles into "ask" rules of internal/policy (its shell analysis
// looks into bash -c, pipelines, env, sudo, xargs and the rest): push, release, delete,
// production_write, outgoing_message, privilege_change each a list of command patterns, a
// custom name the program a bash line runs. A round's tools are read, write, edit, bash,
// grep, find, ls and its report (never run_command, no MCP tools), so the only calls the gate
// holds are bash lines (TestGateHoldsOnlyBashLines). The gate runs after
// the permission gate; a call it holds is refused before it runs (no intent recorded) and
// recorded in round.ended's gates; the round ends waiting_for_human. [Approve] runs exactly
// that call once (a bash line as bash -c LINE through internal/command, in the workspace),
// records gate.decided with its exit code and redacted output, and the loop is ready;
// [Reject] records the reason, which the next round's request carries.
//
// # Triggers
//
// A contract's trigger is manual, "every DURATION" (at least [MinEvery]), "watch PATH..."
// (relative paths inside the workspace, never under .rein or .git) or webhook; it is part of
// the locked contract, so [Start]'s --trigger must say the same ([ErrTrigger] otherwise) and
// a watch path that leaves the workspace through a symlink is refused. [Run] is a manual
// firing per round (on an every loop it waits out the schedule between rounds). [Serve] holds
// the lease and runs a round per firing: the schedule ([Env].Sleep waits), the watcher, and a
// webhook on a loopback address ("POST /", "Authorization: Bearer" with the token of
// $REIN_HOME/loops/<id>/webhook.token, created 0600 on first use and never printed, compared
// in constant time over sha256 digests; bodies above [MaxWebhookBody] are 413; a body is
// empty or strict JSON {"note"}). It ends when a round (or the checks before one) leaves the
// loop in a state other than ready, or ctx ends. Every firing is recorded as loop.trigger
// {kind, at, source, paths, note, disposition} before it acts: run (a round starts),
// queued (a round runs: exactly one more follows it), coalesced (one is queued already).
// Serve ending with a round still queued records the queued firing's fate: loop.trigger with
// disposition dropped and its reason (the state the round it waited for ended in).
//
// The watcher polls (no file-notification dependency is approved for rein, and polling is
// portable and bounded): every Poll it stamps each entry under the watched paths — size,
// mtime, inode, mode — through os.Root (a symlink is stamped as itself, never followed) and
// skips .rein, .git and $REIN_HOME; changes fire once, after Debounce without a further
// change, naming the changed paths. While a round runs its changes are the round's own
// writes: they never fire, and the watcher takes a new baseline when the round ends.
package loop
