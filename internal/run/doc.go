// Package run is rein's delivery-run engine (README, "Delivery runs"). This first part holds
// the inputs that are fixed when a run starts and the deterministic stages around them; model
// stages, contracts, gates and tickets build on it.
//
// # Project profile
//
// .rein/profile.yaml ([Profile]) is decoded strictly (unknown fields refused) and validated
// ([ParseProfile]); every problem names its line. It declares required guidance files bound to
// the sha256 of their bytes, verification commands (id → argv, required or not; no shell),
// pinned skills (name, revision, path, the model stages whose requests carry it), a model policy and budget per role (workflow, writer,
// review; the review model must differ from the writer's) and the harness it is compatible with.
// Its digest is the sha256 of the file's bytes. [Approve] records approver, time and that digest
// in .rein/profile.approval.json; any edit of the file (a comment included) changes the digest
// and so invalidates the approval ([CheckApproval]). [Draft] proposes a profile from the
// repository.
//
// # Workflow
//
// [DeliveryWorkflow] is the workflow as versioned data: every stage of the delivery-run design (README, Delivery runs) in order, with
// its kind (check, model, human, gate, terminal), role and gate. Its digest is the sha256 of its
// JSON encoding and is part of the execution lock.
//
// # Starting a run
//
// [Start] refuses a profile that is invalid ([ErrInvalidProfile]), missing ([ErrNoProfile]) or
// not approved ([ErrNotApproved]). It then writes three immutable artifacts (markdown with YAML
// frontmatter; the digest-bound facts are a JSON block in the body, so they enter the artifact
// digest) under <project>/.rein/runs/<run-id>/:
//
//	requirement.md             the requirement's bytes, as read at start
//	requirement-snapshot.md    source path and version, content digest, summary, delivery branch
//	execution-lock.md          harness version and binary digest, workflow digest, artifact and
//	                           run schema versions, skill tree digests, guidance digests, role
//	                           model policies and budgets, profile digest
//
// Each is written to a temporary file, fsynced, renamed and made read-only; an existing file is
// never replaced. Then it creates the run ledger (type run, common ledger format) under
// $REIN_HOME/runs/<run-id>/ whose header binds the artifact digests, and runs Preflight.
//
// # Ledger records
//
// The run ledger holds state and artifact references only — never requirement text, prompts or
// transcripts. Kinds: run.started {project, artifacts}, stage.started / stage.completed
// {stage, attempt, ...}, preflight.result {checks, gaps, artifact}, run.blocked {blockers,
// schema} (schema 2: a blocker recorded for one ticket names it in [Blocker].Ticket; older
// records named it only in the detail text, which is what status falls back to for them),
// run.aborted {reason}, run.sandbox {sandboxed, by, command, at, covers, confines} (the run's
// sandbox decision, recorded once by the first next/resume with a sandbox: every later one
// builds the sandbox through [Env].NewSandbox, or stops wrapping sandbox.ErrUnavailable —
// never runs an approved command unsandboxed), stage.attempt (see Research), lock.amended
// (see Relock), and those of the stages after the tickets (see After the tickets). Every
// record is fsynced before the command reports it.
//
// # Research
//
// [Next] runs the current stage; so far that is Research. Each attempt is an agent with a fresh
// session under $REIN_HOME/runs/<run-id>/stages/research-<n>/, asked of [Env.Agents] with an
// agentspec.Spec (rein's composition root builds it the way it builds every agent: model
// retries, the workflow role's read-only tool surface plus contract.StageResult, the
// permission gate, hooks, telemetry and the session lifecycle); run imports no tool, provider
// or model package. The spec carries the stage's input boundary ([modelStage].bound,
// bounds.go), which the read tools enforce on real paths: Research reads the repository
// without .rein/ (agentspec.ReadScope.Deny); Specification and Ticket Planning get only the
// read tool (agentspec.Spec.Standard), confined to their pack's files (ReadScope.Only). Stage
// agents get the tools' brief descriptions, so a request's fixed overhead (system prompt and
// tool schemas) stays within 4 KB. Test seams come through [Env] too (Crash, SessionFS, RunFS). [ResearchSystem] and
// one request ([ResearchRequest]) starting with [RequestPrefix]; contextpack.CutAtPrefix cuts
// every model request there (and fails closed without it). Every stage request carries the
// evidence gaps and ends with the stage's rules and the boundary rules (input boundary, no
// history); the contract's schema goes only as rein_stage_result's parameters. The accepted
// contract becomes research.md (immutable); a stage.attempt record {stage, attempt, outcome,
// reason, artifact, contractDigest, session {id, dir, seq, hash}, turns, tokens, costUsd}
// settles every attempt. Up to
// [MaxStageAttempts] attempts within the role's modelTurns, then [BlockStageFailed].
//
// # Clarification, Specification and the Spec Gate
//
// Research's required remainingUnknowns and Preflight's required evidence gaps go to
// Clarification: with none it completes at once; otherwise [Next] refuses with
// [BlockClarificationRequired] (reported, not recorded) naming them until [Clarify] records the
// answers (strict: every key an unknown or required gap id, every required one answered) as
// clarification.md and a clarification.answered record. Specification runs on the
// same runner as Research ([modelStage]) with a pack of requirement, snapshot, research,
// clarification, the latest Spec Gate rejection reason and guidance; its accepted contract is
// spec.md (spec-<n>.md for attempt n > 1). [ApproveGate] records a gate.decision bound to the
// spec's digest only when the given digest is the current one; [RejectGate] writes the reason
// as spec-rejection-<n>.md and sends the run back to Specification (a new round of attempts).
// Status reports an approval stale when the approved file's digest changed.
//
// # Reading artifacts
//
// [Artifacts] lists a run's artifacts in ledger order, each with the stage and attempt that made
// it; [ViewArtifact] reads one (an id names its latest version, a file name any version) for
// view.Render, its reference ids resolved to the digest of the version of each id recorded
// before it and its inputs from how it was made (the start artifacts, Preflight, the staleness
// graph, the decided artifact of a rejection, the pack references its contract names);
// [DiffArtifacts] picks two versions to compare (the latest version of a gate's artifact
// against the latest other version the gate decided on, else the previous version; or the
// version a given attempt made); [GateArtifact] reads the artifact awaiting a gate for an
// interactive approval, which [ApproveGate] then binds to the digest shown. All four open the
// run ledger read-only, as [Status] does, and write nothing anywhere.
//
// # States, lease, causes and metrics
//
// [Status] names the run's state (StateReady, StateRunning, StateWaitingForHuman,
// StateBlocked, StateInterrupted, StateCompleted, StateAborted) with what goes on: the next
// command, the gate's artifact and digest with the exact approve and reject commands, the
// Clarification ids to answer. [Next] and [Resume] hold the run's lease ([Lease], lease.json in
// the run's $REIN_HOME directory: pid, process start time, host), created with O_EXCL before
// they open the run and removed when they end; while its process lives another Next or Resume
// refuses with [ErrRunning]; a lease whose process is gone (pid absent, or its start time — on
// Linux /proc/PID/stat field 22 — differs) makes Status report the run interrupted, and the next
// Next or Resume takes it over, recording [KindLeaseTakenOver]. Status only reads it.
//
// Every failed attempt's stage.attempt record carries a typed [Cause]: provider_unavailable
// (the llm error kind and HTTP status of a model call that failed after its retries; recorded
// at once, the stage stops with the *llm.Error, and such attempts do not count against
// [MaxStageAttempts]), budget_exhausted, contract_missing, contract_invalid (problem codes with
// counts) or interrupted (settled by resume). Each attempt also records its first model
// request's size (requestBytes, of it fixedBytes: system prompt and tool schemas, measured
// through agentspec.Spec.OnRequest) and its rendered pack's (packBytes). [RunMetrics] sums the
// settled attempts per stage and role and counts recoveries and blockers, reading the ledger
// read-only. [Report] and [Metrics] are the stable JSON of status and metrics
// ([StatusSchemaVersion], [MetricsSchemaVersion]; the README documents every field).
//
// # Resume
//
// [Resume] (and [Next], before any attempt) settles a model-stage attempt that has a
// stage.started without its stage.attempt record by evidence: its session ledger
// (stages/<stage>-<n>/) and its artifact. Artifact present, its contract valid again, session
// verifying with no other accepted digest: accepted (stage.attempt with reason interrupted, then
// stage.completed). No artifact and no accepted submission in an absent, empty or verifying
// session: failed (reason interrupted); the retry is the next attempt number in a fresh session.
// Anything else: the [BlockUnknownOutcome] blocker. An accepted attempt without its
// stage.completed gets it. Settling is idempotent.
//
// Outside the model stages: Preflight started (or the run started) without its completion is
// run again, being deterministic: a missing preflight.md is written, one matching the new result
// is recorded, one differing blocks with [BlockUnknownOutcome]. A rejection-reason artifact
// without its gate.decision record gets the record (the reason and approver are in the
// artifact). An approval is a single gate.decision record: there is nothing to settle.
// clarification.md without its clarification.answered record gets the record (every answer is
// in the artifact; answers bound to another research artifact block with
// [BlockUnknownOutcome]), and a recorded clarification without the stage's completion gets it.
//
// # Drift
//
// [Reconcile] compares every locked input with its current state: the running harness (version
// and binary digest), the profile digest, each role's model policy, each guidance file's digest,
// each skill's tree digest, the workflow digest, the requirement source and the run's own
// artifacts. Start reconciles before and after Preflight; Next, Resume, Clarify and the gates
// on every call, recording what changed; [Status] in memory only (it opens the ledger
// read-only and writes nothing anywhere). Any difference is a typed blocker
// (run_harness_package_drift, run_profile_drift, run_model_policy_drift, run_guidance_drift,
// run_skill_drift, run_workflow_drift, run_requirement_drift, run_lock_tampered) naming its
// input ([Blocker].Input) with recovery options, recorded once in the run ledger. A recorded
// drift blocker is re-evaluated every time: when its input matches the lock again it lifts (a
// [KindBlockerLifted] record with the evidence; Status only reports it). Nothing lifts before
// Preflight passed or while the execution lock cannot be read; other blockers stay until their
// own recovery. Every option a drift blocker prints is one that works (a test follows each):
// restore, relock (guidance, skill, profile — model policy through the profile — and harness),
// continue with the locked binary (harness), or abort.
//
// # Relock
//
// [Relock] adopts a drifted input as it is now — a person's decision, with its approver. The
// execution lock is immutable, so the decision and the lock in force after it are an immutable
// amendment artifact, execution-lock-amendment-<n>.md, referenced by a lock.amended record
// ([LockAmendment]: n, input, old and new digest, approver, at, artifact, changed, stale, gates,
// restartStage); [Reconcile] compares against the lock as its amendments leave it (an
// amendment whose bytes changed is run_lock_tampered). Relockable: guidance:PATH (the file's
// digest now), skill:NAME (its tree digest now), profile (the edited profile, which must be
// approved — [ErrNotApproved] otherwise — accept the running harness and reconcile cleanly:
// guidance digests equal to the files', skills readable, required commands resolvable; it
// replaces everything the lock takes from the profile) and harness (the running rein; it must
// run the locked workflow, and the unchanged locked profile must accept it). Never relocked
// ([ErrNotRelockable], naming the recovery): models.ROLE (relock the profile that holds it),
// the requirement (the run's identity), the workflow (the stage structure the ledger follows)
// and the lock itself (restore it). An input that has not drifted is [ErrNotDrifted]; a run
// that never passed Preflight, or holds an attempt a crash interrupted, is refused too. A
// refused relock writes nothing (it decides on a read-only view first).
//
// What a relock invalidates is computed through the artifact graph: each node gains the locked
// inputs its stage reads (guidance and skills: the workflow-role model stages, whose packs and
// requests carry them; models.ROLE: that role's model stages; verification: the ticket stages;
// harness: every model stage, whose prompts, tools and contract checks are harness code; the
// profile digest alone: none; Preflight's checks are facts of the start and never re-run),
// with their digests under the old lock, and is checked against the new one with every
// artifact at its recorded digest. The stale nodes and invalid gate approvals are recorded, and
// the run goes back to the earliest stale node's stage: each model stage from there starts a
// new round of attempts (new files: research-<n>.md, spec-<n>.md, ticket-plan-<n>.md), a
// redone Clarification supersedes its answers (clarification-<n>.md next), and each gate from
// there must be approved anew (status shows its approval stale, naming the relock). Nothing is
// stale when no stage has read what changed yet; the run then stays where it is. The drift
// blockers the relock resolves lift, their evidence naming the amendment.
//
// # Recorded evidence
//
// Status, Next, Resume, Clarify and the gates also check what the run ledger references beyond
// the locked inputs; these blockers are reported, never recorded, so restoring what changed
// resolves them: [BlockArtifactTampered] for an artifact outside the graph (Preflight, rejection
// reasons, an accepted contract not yet built on) whose file digest is not the recorded one,
// [BlockStale] for the graph's, and [BlockStageSessionRolledBack] / [BlockStageSessionCorrupt]
// for a stage session whose ledger no longer holds the head its stage.attempt record anchored,
// does not verify or names another session. A run ledger that does not verify, or whose header
// names another run, fails every command with an error naming the run and wrapping
// ledger.ErrCorrupt; [Latest] reports such a run when it is the project's newest.
//
// # Tickets
//
// After the Ticket Plan Gate, [Next] runs every ticket of the approved plan (ticket.go,
// ticket_run.go) through Ticket Execution, Review, Verification and Acceptance, in the
// batches of schedule.Batches for [Env.Parallel] (dependsOn order), and completes
// ticket-acceptance once all are accepted, which puts the run at manual-integration. The
// tickets of a batch run at the same time (ticket_parallel.go: one goroutine per ticket, at
// most Env.Parallel — or the schedule's N — at once); each goroutine alone touches its
// ticket's state, and what they share is under ticketState.mu: Run.StageAttempts, Run.Blockers
// and the live sessions, through which each model turn is reserved from the role's budget
// before it starts (turnReservation, a context hook; ticket_budget.go). The run ledger
// serializes their appends: ticket records interleave in the order things happened, each
// naming its ticket, with the shapes below. A ticket's failure stops the batch after every
// other ticket's current attempt (writer, review, verification, acceptance) is recorded; the
// failures are reported in batch order. Once, before any ticket starts, ticket.scheduled records the
// fan-out decision (schedule.CheckFanOut over one writer and one review attempt per ticket, at
// least [MinAttemptTurns] each; short: run_budget_insufficient, nothing started), the base
// (the commit the run started on, from the snapshot) and the delivery branch, made there by
// worktree.Repo.CreateBranch ([BlockBaseDrift] when it exists elsewhere or moved). Ticket ids
// must name a directory ([BlockTicketInvalid]). Every ticket record's kind starts "ticket.":
//
//	ticket.scheduled          [TicketSchedule]
//	ticket.start              [TicketStart]: the commit its worktree starts from, and why
//	ticket.lease              {ticket, pid, startTime, host, command, acquired, sessionId}
//	ticket.lease.released     the same
//	ticket.lease.reclaimed    the same with evidence: the owner proven dead
//	ticket.writer.started     {ticket, attempt, session, model, parent, inputs}
//	ticket.freeze.intent      {ticket, attempt, parent, sessionId, artifact, verification}
//	ticket.candidate          [CandidateRecord]
//	ticket.writer.attempt     [TicketAttempt]
//	ticket.review.started     {ticket, attempt, session, model, candidate}
//	ticket.review.attempt     [TicketAttempt] (outcome accepted, failed or void)
//	ticket.verification       [TicketVerification]
//	ticket.accepted           [TicketAccepted]: what Manual Integration builds on
//
// Ticket attempts also count as attempts of their workflow stage (ticket-execution,
// ticket-review), so role budgets, metrics, artifact tamper checks and session rollback
// checks cover them. Each attempt takes the ticket's lease first (Run.takeTicketLease): a
// live owner refuses with [ErrRunning], a dead one on this host (processAlive, as for the run's
// lease) is reclaimed and recorded, another host's blocks ([BlockTicketLeaseHeld], reported).
//
// A writer attempt is a fresh session of the writer role in the ticket's worktree
// ($REIN_HOME/worktrees/<run>/<ticket>, made by worktree.Repo.CreateAt from the ticket's
// start — worktree.Repo.Start of the base and the accepted candidates of the tickets it
// depends on: the base, the one candidate's commit, or rein's deterministic merge of several;
// recorded in ticket.start before the worktree is made and computed again on every reuse
// ([BlockDependencyConflict], [BlockTicketStartMismatch]); the candidate's diff is from the
// start; later attempts continue from the last candidate), request prefix [WriterRequestPrefix], with the
// standard tools read, write, edit, grep, find, ls, the run_command tool (an approved
// verification command by id through internal/command: fixed argv, scrubbed environment plus
// [CommandEnv], no shell) and rein_ticket_candidate. The request carries the ticket, the
// specification sections it covers, profile facts, the command ids, the evidence gaps, the
// skills mapped to ticket-execution, and the pack: guidance and, on a retry, the previous
// candidate's blocking review and failed verification artifacts. A context hook
// (ticketGuard) prefixes each refused call, as the model sees it, with its blocker
// ([BlockWriterPathEscape], [BlockWriterUnapprovedBash]; [BlockReviewMutation] for a reviewer)
// and counts it in the attempt's refusals. The freezer checks the session is the current
// attempt, the elapsed budget, a change in the worktree and every required command passing
// when rein runs it; then writes the candidate artifact, records the freeze intent, commits
// (worktree.Worktree.Freeze), seals and records the candidate.
//
// A review attempt refuses to start when the review model is one of the ticket's writer models
// ([BlockReviewModelNotDistinct], recorded); it is a fresh read-only session (request prefix
// [ReviewRequestPrefix]: ticket, candidate identity, candidate artifact, git state, diff,
// writer verification provenance, [ReviewIsolation]) on the frozen worktree. The candidate is
// verified (worktree.Worktree.Verify) before and after: a change makes the review void and
// reports [BlockReviewCandidateStale] (never recorded) until the worktree verifies again.
// Verification reruns the required commands on the frozen commit in a clean checkout
// (worktree.Repo.Checkout under worktrees/<run>/_verify/<ticket>). Acceptance needs an
// accepted review without blocking findings and a passing verification; otherwise the next
// writer attempt runs, up to [MaxTicketAttempts] ([BlockTicketFailed]) within the budget.
//
// Before anything runs on a ticket its interrupted attempts are settled by evidence
// (Run.settleTicket): a writer attempt with its candidate recorded is accepted; one with a
// freeze intent whose worktree holds that attempt's commit is frozen again (Freeze finds the
// commit, never making a second) and recorded; one that froze nothing failed (interrupted);
// anything else is [BlockUnknownOutcome]. An interrupted review failed (interrupted).
//
// # After the tickets
//
// The ticket loop hands each accepted ticket on as a [KindTicketAccepted] record
// ([TicketAccepted]: ticket, attempt, base commit, frozen candidate — digest, commit, diff
// digest, candidate artifact — review and verification artifacts, writer and review models);
// [Run].Accepted holds the latest per ticket. Once every ticket of the approved plan is
// accepted the run is at Manual Integration, and [Next] runs one stage a call (checkstage.go):
// each attempt is a stage.started, a [KindCheckResult] record ([CheckResult]: outcome, blockers,
// artifact) and, when it passed, stage.completed. A failed check's blockers are reported by
// [Status] until the next check decides again (they are never lifted by a record); a check a
// crash interrupted is run again, being deterministic.
//
// Manual Integration (integrate.go) merges the candidates in schedule.Order of the plan with
// worktree.Integrate onto the delivery branch, from the base the first ticket was made from
// (every other ticket's base must be it or an accepted candidate's commit,
// [BlockTicketBase]); the outcome is a [KindIntegrated] record ([Integration]: branch, base,
// from, head, per ticket the first commit of the branch's first-parent line that holds its
// candidate). A conflict is a [KindIntegrationConflict] record: the run waits for a person
// ([ConflictError], status waiting_for_human with the ticket and files); [Resume] then
// integrates from the branch's current commit and records the person's commits as the
// resolution. Reconciliation (reconcile_git.go) lists base..head with gitx.Runner.Log: each
// commit must be in an accepted ticket's base..candidate chain, rein's merge commit of an
// accepted ticket (two parents, the second the candidate, rein's identity and trailers) or a
// recorded resolution ([BlockForeignCommit]); every candidate must be on the branch
// ([BlockCandidateMissing]) and still match its digest, diff and artifacts
// ([BlockCandidateMismatch]). Final Checklist (checklist.go) writes the traceability matrix
// ([Checklist]) and names uncovered items and tickets ([BlockChecklistUncovered]) and tickets
// whose verification artifact ([VerificationReport]) does not record a pass on their commit
// ([BlockChecklistUnverified]). Full Run Verification (fullverify.go) runs the locked required
// commands on the integrated head in a clean checkout through internal/command and records a
// [VerificationReport] (exit codes, output tails redacted by internal/secret); a failure is
// [BlockFullVerificationFailed]; a pass writes the [DeliverySummary] ([KindDeliverySummary]).
// Run Acceptance is the run gate ([GateRun]): [ApproveGate] binds the summary's digest and
// checks the branch reconciles again; it records Delivery Ready ([KindDeliveryReady]: branch,
// head, summary) and the run is completed. The run gate cannot be rejected. rein never
// pushes, merges elsewhere or deploys. A gate approval is its gate.decision record followed
// by the gate stage's stage.completed: a crash between the two leaves the approval recorded
// ([Run].Uncompleted holds the gate stage; status says interrupted, a second approval is
// refused) and [Next] or [Resume] completes it without asking again; an approval whose record
// never reached the ledger is absent and the gate still waits.
//
// # Audit
//
// [Audit] recomputes from the run ledger, the stage session ledgers (session.LoadAs), the
// artifacts and git alone the checks of [AuditReport], in order: sessions fresh (no parent,
// no forked entry, one user message: the request with its prefix), models distinct per ticket,
// review sessions offered and calling only read tools (stage.attempt records of the
// ticket-review stage name their ticket and tools), no writer prose in a review session,
// ticket starts (each accepted ticket's start computed again from the snapshot's base, the
// plan's dependsOn and the accepted candidates, equal to its ticket.start record and its
// candidate's base, its frozen commit descending from it with its diff against it),
// candidates frozen (digest of commit, recomputed diff and artifact), approvals bound to the
// digest their artifact has now, and the same lock. A violation is an *[AuditError]
// (errors.Is [ErrAuditFailed]) naming the first.
//
// # Skill tree digest
//
// The sha256 over the regular files under the skill's directory in lexical path order, each fed
// as its slash-separated relative path, a NUL, its length in decimal, a NUL and its bytes. A
// symbolic link or other non-regular file is refused.
//
// # Pinned skills in stage requests
//
// A skill goes to the model stages its profile entry lists in stages (none: to no stage). Before
// each attempt of a stage, every skill mapped to it is read once, its tree digest computed from
// the bytes read and compared with the locked one (a difference is run_skill_drift, recorded
// through reconciliation; the request is not built), and the request's "Pinned skills" section
// carries each file in walk order: its path, size and sha256, then a text file's bytes verbatim
// in a backtick fence longer than any backtick run in it; a binary file (a NUL byte, or not
// UTF-8) is named with its size and digest only. The section states that the trees are the
// locked, unmodified ones and that the request's contract and rules win over them. Limits:
// [MaxSkillFiles] files and [MaxSkillTextBytes] of text a skill, [MaxStageSkillBytes] of skill
// text a stage request; [Start] refuses a profile beyond them, and a request beyond them (a
// harness with other limits) is refused with [BlockSkillTooLarge]. Nothing is truncated.
package run
