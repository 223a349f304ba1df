package system

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/predial"
	"github.com/reinhq/rein/internal/llm/redact"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/llm/watchdog"
	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/policy"
	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
	"github.com/reinhq/rein/internal/tool/shell"
)

// Options are the resolved inputs of an agent: every agent rein runs — print and JSON runs,
// RPC, compaction, delivery-run stage attempts — is built from them by [Build].
type Options struct {
	Provider string
	Model    string
	BaseURL  string
	APIKey   string
	// Script is the scenario file of the script provider.
	Script string
	// Adapter, when set, is the model adapter instead of one built from Provider (a test
	// seam: it is wrapped in retries and telemetry like any other). Provider and Model still
	// name it in the session and the spans.
	Adapter llm.Model
	// Thinking is passed on to every model request.
	Thinking llm.ThinkingLevel
	// Role is the role whose tool surface the agent gets (policy.SurfaceFor); "" is the
	// default role, a person's own session with every tool.
	Role policy.Role
	// ExtraTools are offered besides the standard tools (a stage's contract tools); the role's
	// surface must allow them.
	ExtraTools []tool.Tool
	// MCP starts the configured MCP servers and offers their tools (interactive, print, JSON
	// and RPC runs; never a delivery stage, whose tool surface is fixed). It needs the
	// default role and the default tool set.
	MCP bool
	// Environ is what MCP servers inherit (before their own "env", without the secretEnv
	// names); nil means rein's environment.
	Environ []string
	// Version returns rein's version, sent to MCP servers; nil sends none. It is called only
	// when a server starts (reading the build information parses every dependency's line).
	Version func() string
	// Tools selects tools by name; nil means the default set. NoTools offers none.
	Tools   []string
	NoTools bool
	// BriefTools offers the standard tools with their brief descriptions (tool.Brief): a
	// delivery stage's requests stay small.
	BriefTools bool
	// Reads bounds what the read tools may read (an input boundary: a stage's pack, or the
	// repository without .rein/); the zero value adds no bound.
	Reads agentspec.ReadScope
	// SystemPrompt, when set, is the whole system prompt: no project context is assembled
	// (a stage sees only its pack). The trust gate then guards only the project's settings.
	SystemPrompt string
	// ContextHooks may replace each request's messages (never what is recorded).
	ContextHooks []kernel.ContextHook
	// OnToolError, when set, is told of every tool call answered with an error, with the
	// error value (kernel.Config.OnToolError).
	OnToolError func(call *llm.ToolCall, err error)
	// OnRequest, when set, sees every model request before it goes into retries.
	OnRequest func(*llm.Request)
	// Budgets: model turns, cost, tokens (input, output and cache) and a deadline.
	MaxTurns       int
	MaxCost        float64
	MaxUsageTokens int
	Deadline       time.Time
	// Dir is the workspace; Home is $REIN_HOME.
	Dir  string
	Home string
	// Getenv reads the environment (os.Getenv in production).
	Getenv func(string) string
	// Observe receives kernel events.
	Observe func(kernel.Event)
	// Inbox, if set, supplies messages queued during a run (RPC steer and follow_up).
	Inbox kernel.Inbox
	// Tracer, if not nil, traces the agent (its events, model requests and session writes).
	// The caller owns it and shuts it down.
	Tracer *telemetry.Tracer
	// HTTPClient is used by network providers and MCP servers; nil means rein's shared
	// provider client (predial.Client: it opens the provider's connection during Build) for
	// providers and http.DefaultClient for MCP servers.
	HTTPClient *http.Client
	// Retry overrides llm.DefaultRetryPolicy when MaxAttempts > 0.
	Retry llm.RetryPolicy
	// StreamIdleTimeout bounds every silence of a network provider: the wait for a response's
	// headers and for each next byte of its stream (--stream-idle-timeout); 0 means the
	// watchdog default of 120 s.
	StreamIdleTimeout time.Duration
	// Now is the clock (the kernel's and the session ledger's); nil means time.Now.
	Now func() time.Time
	// LedgerFS is the session ledger's filesystem; nil is the OS (a test seam).
	LedgerFS ledger.FS
	// Session says which session ledger records the run.
	Session SessionChoice
	// History and HistoryUsage are the conversation a run without a session continues (RPC's
	// set_model keeps it across the new agent).
	History      []llm.Message
	HistoryUsage llm.Usage
	// KeepRecent is how many recent tokens compaction keeps verbatim (0: the default).
	KeepRecent int
	// Sandbox runs bash (and approved commands) in the bubblewrap OS sandbox (--sandbox);
	// without a working bwrap the run stops with ErrConfig.
	Sandbox bool
	// KeepBackground leaves what bash commands start in the background running after the
	// command ends (settings: "bash": {"keepBackground": true}); by default it is ended.
	KeepBackground bool
	// Trust is the run's own say about trusting the project (--trust, --no-trust).
	Trust TrustChoice
	// Confirm asks the user a yes/no question on the terminal (an undecided project's trust,
	// a call an "ask" permission rule or a hook holds); nil in a non-interactive run, which
	// refuses instead.
	Confirm func(question string) (bool, error)
	// Gate, when set, is consulted after the permission gate allowed a call (agentspec.Spec.Gate).
	Gate kernel.Gate
	// Approve, when set, answers the calls an "ask" permission rule holds instead of Confirm:
	// an interactive UI that shows the pending call and takes the user's reason for a denial.
	Approve func(ctx context.Context, a Approval) (Answer, error)
	// Notice shows the user one line: what recovering a session settled, a hook that failed,
	// a hook's message. nil drops them.
	Notice func(string)
}

// SessionMode says where a run is recorded.
type SessionMode int

const (
	SessionNew      SessionMode = iota // a new session under $REIN_HOME/sessions/<project>/
	SessionNone                        // in memory only (--no-session)
	SessionContinue                    // the latest session of the working directory (-c)
	SessionResume                      // the session Ref names: id, id prefix or path (--resume, --session)
	SessionFork                        // a new session forked from Ref = ID[@ENTRY] (--fork)
	SessionAt                          // the session at the path Ref, created if missing (--session PATH)
	SessionCreate                      // a new session with id ID in the directory Ref, which must not exist
)

// SessionChoice selects the session of a run.
type SessionChoice struct {
	Mode SessionMode
	Ref  string
	// ID is the id of a SessionCreate session.
	ID string
}

// Runtime is a built agent with what it owns: the workspace, the session and its lifecycle
// (see lifecycle.go).
type Runtime struct {
	Agent     *kernel.Agent
	Model     llm.ModelInfo
	Workspace *tool.Workspace
	Tools     *tool.Set
	// System is the assembled system prompt; its Diagnostics say what was skipped or cut.
	System    *contextpack.Assembly
	KeySource KeySource
	// Session is the durable session, nil with SessionNone; Resumed says it existed before.
	Session *session.Session
	Resumed bool
	// Opened reports what opening an existing ledger found (a repaired torn tail).
	Opened *ledger.Report
	// Trusted says whether the project's own rein resources were loaded.
	Trusted bool
	// PermissionMode is the permission mode the run's gate applies (see ModeDefault).
	PermissionMode string
	// Sandboxed says bash runs in the OS sandbox (--sandbox or the settings' "sandbox").
	Sandboxed bool
	// hooks makes the hooks of each agent (see hookWiring).
	hooks *hookWiring
	// env is what the session adds to its bash commands' environment (see sessionEnv).
	env *sessionEnv
	// notice is Options.Notice (never nil).
	notice func(string)
	// created says the session was created by this Build: a failed Build removes it.
	created bool
	// secretEnv are the name patterns of variables the bash tool never passes on.
	secretEnv []string
	// masks are the absolute paths the sandbox keeps unreadable (see readMasks); set once
	// the permission rules are known.
	masks []string
	// skillDirs are the skill directories outside the workspace: the read tool's read-only
	// roots, shown read-only in the sandbox (see openSkillDirs).
	skillDirs []string
	// extraDirs are the additional directories the file tools read and write (and a
	// sandbox binds writable): permissions.additionalDirectories.
	extraDirs []string
	// skills are the loaded skills a user may invoke with /NAME; active is the one invoked
	// by the run in progress (see skillcall.go).
	skills []contextpack.Skill
	active activeSkill
	// guard checks the session against its anchor and its ledger file's identity, and
	// anchors it (nil without a session, or on a test filesystem); discarded says a failed
	// Build is releasing the Runtime, which anchors nothing.
	guard     *sessionGuard
	discarded bool
	// spill is the bash tool's directory for full outputs when there is no session; removed
	// by Close.
	spill string
	// journal records the processes the bash tool runs (closed by Close).
	journal *proc.Journal
	// MCP holds the run's MCP servers (nil without them); Close ends them.
	MCP *mcp.Manager
	// predial is the provider connection opened during Build for the first request (nil
	// when none was); Close closes it when no request took it.
	predial *predial.Ahead
	// mu guards the conversation of a run without a session.
	mu      sync.Mutex
	history []llm.Message
	usage   llm.Usage
}

// DefaultTools is the tool set offered when none is selected.
var DefaultTools = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// Providers lists the provider names rein knows.
var Providers = []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat, llm.ProviderScript}

// Build resolves o into a Runtime: the model in retries, the role's tools over the confined
// workspace, the trust gate and settings, the permission gate, the hooks, telemetry and the
// session. A session that Build created is removed again when a later step fails, so a
// mistake leaves no empty session behind. Most callers want [Open], which also recovers a
// resumed session.
func Build(o Options) (*Runtime, error) {
	if o.Getenv == nil {
		return nil, errors.New("system: Options.Getenv is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := kernel.CheckCost(o.MaxCost); err != nil {
		return nil, fmt.Errorf("%w: --max-cost: %w", ErrConfig, err)
	}
	if o.MaxTurns < 0 || o.MaxUsageTokens < 0 {
		return nil, fmt.Errorf("%w: the turn and token budgets must not be negative (0: no limit)", ErrConfig)
	}
	policy := llm.DefaultRetryPolicy
	if o.Retry.MaxAttempts > 0 {
		policy = o.Retry
	}
	ws, err := tool.OpenWorkspace(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rt := &Runtime{Workspace: ws, notice: o.Notice, history: slices.Clone(o.History), usage: o.HistoryUsage}
	if rt.notice == nil {
		rt.notice = func(string) {}
	}
	fail := func(err error) (*Runtime, error) {
		rt.discard()
		return nil, err
	}
	// An existing session (or a fork's parent) brings its model configuration; a new one is
	// created only once the configuration is known to work.
	if err := openExisting(&o, rt, policy); err != nil {
		return fail(err)
	}
	model, info, err := resolveModel(o, rt, policy)
	if err != nil {
		return fail(err)
	}
	if err := buildRest(o, rt, model, info, policy); err != nil {
		return fail(err)
	}
	return rt, nil
}

// resolveModel builds the run's model adapter, wrapped in error redaction and retries.
func resolveModel(o Options, rt *Runtime, policy llm.RetryPolicy) (llm.Model, llm.ModelInfo, error) {
	reg := llm.NewRegistry()
	if err := reg.LoadOverrides(filepath.Join(o.Home, "models.json")); err != nil {
		return nil, llm.ModelInfo{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	provider, err := resolveProvider(o)
	if err != nil {
		return nil, llm.ModelInfo{}, err
	}
	modelID := o.Model
	if modelID == "" {
		modelID = llm.DefaultModel(provider)
	}
	if modelID == "" {
		return nil, llm.ModelInfo{}, fmt.Errorf("%w: provider %s has no default model; pass --model", ErrConfig, provider)
	}
	info, _ := reg.Lookup(provider, modelID)
	info.Provider = provider
	model := o.Adapter
	if model == nil {
		m, keySource, err := buildModel(o, rt, provider, info)
		if err != nil {
			return nil, info, err
		}
		model, rt.KeySource = m, keySource
	}
	if o.Adapter != nil {
		// A given adapter gets no key from rein; only a key on the command line can show up.
		model = redact.Errors(model, o.APIKey)
	}
	model = llm.Retry(model, policy)
	if see := o.OnRequest; see != nil {
		inner := model
		model = llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			see(req)
			return inner.Stream(ctx, req, emit)
		})
	}
	return model, info, nil
}

// buildRest builds what follows the model: tools, the trust gate and settings, the permission
// gate, a new session, hooks, telemetry and the agent.
func buildRest(o Options, rt *Runtime, model llm.Model, info llm.ModelInfo, policy llm.RetryPolicy) error {
	global, err := ReadSettings(filepath.Join(o.Home, SettingsFile), true)
	if err != nil {
		return err
	}
	o.Sandbox = o.Sandbox || global.Sandbox
	rt.Sandboxed = o.Sandbox
	rt.secretEnv = append(slices.Clone(shell.DefaultSecretEnv), global.SecretEnv...)
	o.KeepBackground = o.KeepBackground || (global.Bash != nil && global.Bash.KeepBackground)
	plan, err := planNew(o, rt)
	if err != nil {
		return err
	}
	var journal *proc.Journal
	if !o.NoTools {
		journal = rt.openJournal(o.Home)
	}
	if rt.Tools, err = buildTools(rt, plan, o, journal); err != nil {
		return err
	}
	// The same assembly `rein context` shows (see Inspect); estimates are not needed here. The
	// trust gate may refuse, so it comes before a new session is created.
	pr, err := openProject(o, global, rt.Workspace.Dir, rt.Tools, nil, false)
	if err != nil {
		return err
	}
	if err := plan.create(o, rt, policy); err != nil {
		return err
	}
	rt.System, rt.Trusted = pr.asm, pr.trust.trusted
	if !ownSession(o) {
		// A delivery run's stage agent keeps its role's surface and its worktree: the
		// settings' permission mode and additional directories are a person's own sessions'.
		pr.mode, pr.modeFrom, pr.dirs = ModeDefault, "", nil
	}
	rt.openSkillDirs(pr.asm)
	rt.openExtraDirs(pr.dirs)
	pol, err := newPolicy(pr.settings.Permissions, rt.Workspace.Dir, pr.trust.root, o.Home, rt.extraDirs...)
	if err != nil {
		return err
	}
	if err := guardTools(rt, plan, o, pol); err != nil {
		return err
	}
	if model, err = openMCP(o, rt, pr, model, journal); err != nil {
		return err
	}
	rt.hooks = &hookWiring{config: pr.settings.Hooks, dir: pr.trust.root, cwd: rt.Workspace.Dir, confirm: o.Confirm, notice: o.Notice}
	rt.PermissionMode = pr.mode
	if pr.mode != ModeDefault {
		rt.hooks.permissionMode = pr.mode
	}
	if pr.mode == ModeDontAsk {
		rt.hooks.confirm = nil
	}
	if err := rt.wireEnv(plan, pr.settings, o.Notice); err != nil {
		return err
	}
	if rt.hooks.dir == "" {
		rt.hooks.dir = rt.Workspace.Dir
	}
	agentHooks, err := rt.hooks.forAgent(rt.Session, rt.Resumed, info.ID)
	if err != nil {
		return err
	}
	confirm, approve := rt.hooks.notifying(o.Confirm, o.Approve)
	var rec kernel.Recorder = &kernel.Memory{}
	sessionID := ""
	if rt.Session != nil {
		rec, sessionID = rt.Session, rt.Session.ID()
		if err := recordConfig(rt.Session, info.Provider, info.ID, o); err != nil {
			return err
		}
	}
	// Telemetry wraps the model (after retries, so one span is one logical request) and the
	// recorder, and observes the events; it changes nothing they do.
	inst := o.Tracer.Instrument(telemetry.Subject{SessionID: sessionID, Provider: info.Provider, Model: info.ID,
		MaxTokens: info.MaxOutput, Tools: rt.Tools.Names(), BaseURL: cmp.Or(o.BaseURL, info.BaseURL)})
	model, rec = inst.Model(model), inst.Recorder(rec)
	agent, err := kernel.New(kernel.Config{
		Model:          model,
		Tools:          rt.Tools,
		Gate:           &skillGate{rt: rt, next: &permissionGate{policy: pol, confirm: confirm, approve: approve, then: o.Gate, mode: pr.mode, modeFrom: pr.modeFrom}},
		Hooks:          agentHooks,
		Recorder:       rec,
		System:         rt.System.Prompt,
		MaxTurns:       o.MaxTurns,
		MaxCost:        o.MaxCost,
		MaxUsageTokens: o.MaxUsageTokens,
		Deadline:       o.Deadline,
		MaxTokens:      info.MaxOutput,
		Thinking:       o.Thinking,
		SessionID:      sessionID,
		Observe:        inst.Observe(o.Observe),
		Now:            o.Now,
		Inbox:          o.Inbox,
		ContextHooks:   o.ContextHooks,
		OnToolError:    o.OnToolError,
		Compactor:      &contextpack.Compactor{Model: model, ContextWindow: info.ContextWindow, KeepRecent: o.KeepRecent},
	})
	if err != nil {
		return err
	}
	rt.Agent, rt.Model = agent, info
	return nil
}

// Session facts holding the model configuration (never a key).
const (
	FactProvider = "provider"
	FactModel    = "model"
	FactBaseURL  = "baseUrl"
	FactScript   = "script"
)

// sessionDefaults fills the model configuration the flags left open from the session's facts.
func sessionDefaults(o *Options, fact func(string) string) {
	if o.Provider == "" && o.Script == "" {
		o.Provider = fact(FactProvider)
		if o.Model == "" {
			o.Model = fact(FactModel)
		}
		if o.BaseURL == "" {
			o.BaseURL = fact(FactBaseURL)
		}
		if o.Provider == llm.ProviderScript {
			o.Script = fact(FactScript)
		}
	}
}

// recordConfig stores the model configuration in the session when it changed.
func recordConfig(s *session.Session, provider, model string, o Options) error {
	script := ""
	if o.Script != "" {
		script, _ = filepath.Abs(o.Script)
	}
	for _, f := range [][2]string{{FactProvider, provider}, {FactModel, model}, {FactBaseURL, o.BaseURL}, {FactScript, script}} {
		if s.Fact(f[0]) != f[1] {
			if err := s.SetFact(f[0], f[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// openExisting opens the existing session o.Session names (continue, resume, a path that
// holds a ledger) and fills the model configuration the flags left open from its facts; for a
// fork it loads the parent, whose facts fill them the same way. New sessions wait for
// openNew.
func openExisting(o *Options, rt *Runtime, policy llm.RetryPolicy) error {
	var facts map[string]string
	switch o.Session.Mode {
	case SessionContinue, SessionResume, SessionAt:
		dir, err := existingDir(*o, rt.Workspace.Dir)
		if err != nil || dir == "" {
			return err
		}
		opts := sessionOptions(*o, policy)
		opts.ID = SessionIDOf(dir)
		s, rep, err := session.Open(dir, opts)
		rt.Session, rt.Opened, rt.Resumed = s, rep, err == nil
		if err != nil {
			return err
		}
		if o.LedgerFS == nil {
			if rt.guard, err = guardSession(o.Home, s, false); err != nil {
				return err
			}
		}
		facts = map[string]string{}
		for _, k := range []string{FactProvider, FactModel, FactBaseURL, FactScript} {
			facts[k] = s.Fact(k)
		}
	case SessionFork:
		ref, _, _ := strings.Cut(o.Session.Ref, "@")
		sd, err := FindSession(o.Home, rt.Workspace.Dir, ref)
		if err != nil {
			return err
		}
		parent, _, err := session.LoadAs(sd.Dir, sd.ID)
		if err != nil {
			return err
		}
		facts = parent.Facts
	default:
		return nil
	}
	sessionDefaults(o, func(k string) string { return facts[k] })
	return nil
}

// existingDir is the directory of the existing session o.Session names; "" for a path that
// holds no ledger yet (SessionAt creates it in openNew).
func existingDir(o Options, cwd string) (string, error) {
	switch o.Session.Mode {
	case SessionContinue:
		sd, err := LatestSession(o.Home, cwd)
		return sd.Dir, err
	case SessionResume:
		sd, err := FindSession(o.Home, cwd, o.Session.Ref)
		return sd.Dir, err
	}
	dir, err := sessionAtDir(o.Session.Ref)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "ledger.jsonl")); err != nil {
		return "", nil
	}
	return dir, nil
}

func sessionAtDir(ref string) (string, error) {
	return filepath.Abs(strings.TrimSuffix(ref, "/ledger.jsonl"))
}

func sessionOptions(o Options, policy llm.RetryPolicy) session.Options {
	return session.Options{Retry: session.RetryPolicy{MaxAttempts: policy.MaxAttempts},
		Ledger: ledger.Options{Now: o.Now, FS: o.LedgerFS}}
}

// newSession is a session Build is about to create, planned before the tools (the bash tool
// spills into its directory) and created after the trust gate, so that a refused run writes
// nothing.
type newSession struct {
	dir, id string
	// fork: the parent and the entry to fork at.
	parent *session.State
	entry  string
}

// planNew plans the run's new session — SessionNew, SessionCreate, SessionFork, or a
// SessionAt path without a ledger; nil when the run opened an existing one or keeps none.
func planNew(o Options, rt *Runtime) (*newSession, error) {
	if rt.Session != nil {
		return nil, nil
	}
	project := ProjectSessions(o.Home, rt.Workspace.Dir)
	switch o.Session.Mode {
	case SessionNone:
		return nil, nil
	case SessionNew:
		id := kernel.NewID()
		return &newSession{dir: filepath.Join(project, id), id: id}, nil
	case SessionCreate:
		if o.Session.ID == "" || !filepath.IsAbs(o.Session.Ref) {
			return nil, errors.New("system: SessionCreate needs an id and an absolute directory")
		}
		if _, err := os.Lstat(o.Session.Ref); !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("system: the new session's directory %s exists already", o.Session.Ref)
		}
		return &newSession{dir: o.Session.Ref, id: o.Session.ID}, nil
	case SessionAt:
		d, err := sessionAtDir(o.Session.Ref)
		if err != nil {
			return nil, err
		}
		return &newSession{dir: d, id: SessionIDOf(d)}, nil
	case SessionFork:
		return planFork(o, rt, project)
	}
	return nil, fmt.Errorf("system: unknown session mode %d", o.Session.Mode)
}

// planFork plans the fork o.Session.Ref = ID[@ENTRY] names.
func planFork(o Options, rt *Runtime, project string) (*newSession, error) {
	ref, entry, _ := strings.Cut(o.Session.Ref, "@")
	sd, err := FindSession(o.Home, rt.Workspace.Dir, ref)
	if err != nil {
		return nil, err
	}
	parent, _, err := session.LoadAs(sd.Dir, sd.ID)
	if err != nil {
		return nil, err
	}
	if entry != "" && parent.Entries[entry] == nil {
		if entry, err = findEntry(parent, entry); err != nil {
			return nil, err
		}
	}
	id := kernel.NewID()
	return &newSession{dir: filepath.Join(project, id), id: id, parent: parent, entry: entry}, nil
}

// create creates the planned session.
func (n *newSession) create(o Options, rt *Runtime, policy llm.RetryPolicy) error {
	if n == nil {
		return nil
	}
	meta, opts := session.Meta{ID: n.id, Cwd: rt.Workspace.Dir}, sessionOptions(o, policy)
	var s *session.Session
	var err error
	if n.parent != nil {
		s, err = session.Fork(n.parent, n.entry, n.dir, meta, opts)
	} else {
		s, err = session.Create(n.dir, meta, opts)
	}
	if err != nil {
		return err
	}
	rt.Session, rt.created = s, true
	if o.LedgerFS == nil {
		if rt.guard, err = guardSession(o.Home, s, true); err != nil {
			return err
		}
	}
	return nil
}

// findEntry resolves a unique entry id prefix.
func findEntry(st *session.State, prefix string) (string, error) {
	var found []string
	for id := range st.Entries {
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%w: entry %q matches %d entries of session %s", ErrNoSession, prefix, len(found), st.Header.ID)
	}
	return found[0], nil
}

func resolveProvider(o Options) (string, error) {
	p := o.Provider
	switch {
	case p != "":
	case o.Script != "":
		p = llm.ProviderScript
	case o.Getenv("ANTHROPIC_API_KEY") != "":
		p = llm.ProviderAnthropic
	case o.Getenv("OPENAI_API_KEY") != "":
		p = llm.ProviderOpenAI
	default:
		stored, err := storedProvider(o.Home)
		if err != nil {
			return "", err
		}
		if stored == "" {
			return "", fmt.Errorf("%w: no provider configured: pass --provider (%s) with a key, set ANTHROPIC_API_KEY or OPENAI_API_KEY, store a key with `rein auth set PROVIDER`, or pass --script FILE for the offline script model; `rein demo` runs without either",
				ErrConfig, strings.Join(Providers, ", "))
		}
		p = stored
	}
	for _, known := range Providers {
		if p == known {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: unknown provider %q; known providers: %s", ErrConfig, p, strings.Join(Providers, ", "))
}

// storedProvider is the provider chosen by the keys in auth.json when neither a flag nor the
// environment names one: anthropic, then openai (the same order as the environment's keys).
// openai-compat needs a base URL, so a stored key alone never selects it.
func storedProvider(home string) (string, error) {
	stored, err := StoredProviders(home)
	if err != nil {
		return "", err
	}
	for _, p := range []string{llm.ProviderAnthropic, llm.ProviderOpenAI} {
		if slices.Contains(stored, p) {
			return p, nil
		}
	}
	return "", nil
}

func buildModel(o Options, rt *Runtime, provider string, info llm.ModelInfo) (llm.Model, KeySource, error) {
	if provider == llm.ProviderScript {
		if o.Script == "" {
			return nil, KeyNone, fmt.Errorf("%w: the script provider needs --script FILE (see docs/script-format.md)", ErrConfig)
		}
		m, err := script.Load(o.Script)
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return m, KeyNone, nil
	}
	if o.Script != "" {
		return nil, KeyNone, fmt.Errorf("%w: --script is only for --provider script (got --provider %s)", ErrConfig, provider)
	}
	key, src, err := ResolveKey(o.Home, provider, o.APIKey, o.Getenv)
	if err != nil {
		return nil, KeyNone, err
	}
	m, err := newAdapter(o, rt, provider, info, key)
	if err != nil {
		return nil, KeyNone, err
	}
	// Every error text the adapter reports passes the redactor, with the key it sends, before
	// the retries, the loop, the ledger or any output see it.
	return redact.Errors(m, key, o.APIKey), src, nil
}

// newAdapter builds the network adapter of provider with key. Without Options.HTTPClient the
// adapter sends through rein's shared provider client, and the connection to the provider is
// opened now, in the background, for the first request (rt.predial; see package predial).
func newAdapter(o Options, rt *Runtime, provider string, info llm.ModelInfo, key string) (llm.Model, error) {
	baseURL := o.BaseURL
	if baseURL == "" {
		baseURL = info.BaseURL
	}
	client := o.HTTPClient
	if client == nil {
		client = predial.Client()
		if key != "" || provider == llm.ProviderOpenAICompat {
			rt.predial = predial.Start(baseURL)
		}
	}
	limits := watchdog.Limits{Header: o.StreamIdleTimeout, Idle: o.StreamIdleTimeout}
	switch provider {
	case llm.ProviderAnthropic:
		if key == "" {
			return nil, missingKey(provider)
		}
		return anthropic.New(anthropic.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput, Timeouts: limits}), nil
	case llm.ProviderOpenAI:
		if key == "" {
			return nil, missingKey(provider)
		}
		api := info.API
		if api != llm.APIOpenAIChat {
			api = llm.APIOpenAIResponses
		}
		m, err := openai.New(openai.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput, API: api, Timeouts: limits})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return m, nil
	default: // openai-compat
		if baseURL == "" {
			return nil, fmt.Errorf("%w: --provider openai-compat needs --base-url (e.g. http://localhost:11434/v1 for ollama)", ErrConfig)
		}
		m, err := openaicompat.New(openaicompat.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput, Timeouts: limits})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return m, nil
	}
}

func missingKey(provider string) error {
	return fmt.Errorf("%w: no API key for %s: pass --api-key, set %s, or store one with `rein auth set %s`",
		ErrConfig, provider, EnvKey(provider), provider)
}

// buildTools builds the agent's tools: the standard ones over the confined workspace and the
// caller's extra (contract) tools, selected by name, then filtered by the role's surface so a
// role never sees a tool it cannot use. The bash tool spills full outputs into the session's
// directory (or, without a session, a directory Close removes) and records its processes in
// journal (nil: nowhere, for a tool set that runs nothing).
func buildTools(rt *Runtime, plan *newSession, o Options, journal *proc.Journal) (*tool.Set, error) {
	ws := rt.Workspace
	ws.Protected = workspaceProtected(o)
	sb, err := openSandbox(o, ws, rt.masks, rt.skillDirs, rt.extraDirs)
	if err != nil {
		return nil, err
	}
	if o.NoTools {
		return tool.New()
	}
	spill, err := rt.spillDir(plan)
	if err != nil {
		return nil, err
	}
	if rt.env == nil {
		rt.env = &sessionEnv{}
	}
	tools := []tool.Tool{
		fstool.Read(ws), fstool.Write(ws), fstool.Edit(ws),
		shell.New(ws.Dir, shell.Options{Sandbox: sb, TempDir: spill, Journal: journal, KeepBackground: o.KeepBackground,
			StripEnv: rt.secretEnv, SessionEnv: rt.env.apply}),
		grep.New(ws, grep.Options{}),
		fstool.Find(ws), fstool.Ls(ws),
	}
	if o.BriefTools {
		for i, t := range tools {
			tools[i] = tool.Brief(t)
		}
	}
	var extra []string
	for _, t := range o.ExtraTools {
		extra = append(extra, t.Spec().Name)
	}
	all, err := tool.New(append(tools, o.ExtraTools...)...)
	if err != nil {
		return nil, err
	}
	names := o.Tools
	if names == nil {
		names = append(slices.Clone(DefaultTools), extra...)
	}
	set, err := all.Select(names)
	if err != nil {
		return nil, fmt.Errorf("%w: --tools: %w", ErrConfig, err)
	}
	role := o.Role
	if role == "" {
		role = policy.RoleDefault
	}
	surface, err := policy.SurfaceFor(role, extra...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	set, err = surface.Filter(set)
	if err != nil {
		return nil, err
	}
	return set, checkScope(o.Reads, set)
}

// checkScope refuses a read scope that cannot hold: one with a path that is not clean and
// workspace-relative, or given to a tool set with bash, whose commands the file tools' guard
// does not see.
func checkScope(s agentspec.ReadScope, set *tool.Set) error {
	if s.IsZero() {
		return nil
	}
	if _, ok := set.Get(policy.ToolBash); ok {
		return fmt.Errorf("%w: a read scope (%s) cannot be enforced on bash: offer the agent no bash tool", ErrConfig, s.Name)
	}
	_, err := newScopeGuard(s, nil)
	return err
}

// guardTools makes the read scope and the permission rules hold for every path the tools
// reach: the workspace's Guard judges each file the file tools and grep open or list, and with
// --sandbox and read rules that deny paths, or skill directories outside the workspace, the
// tools are built again on a sandbox that masks those paths and shows those directories
// read-only (the first build, before the rules and the skills were known, only checked that
// a sandbox can be built).
func guardTools(rt *Runtime, plan *newSession, o Options, pol *policy.Policy) error {
	guard, err := newScopeGuard(o.Reads, pathGuard{policy: pol})
	if err != nil {
		return err
	}
	rt.Workspace.Guard = guard
	if !o.Sandbox || o.NoTools {
		return nil
	}
	if pol.DeniesReads() {
		masks, err := readMasks(pol, rt.Workspace.Dir, rt.extraDirs)
		if err != nil {
			return err
		}
		rt.masks = masks
	}
	if len(rt.masks) == 0 && len(rt.skillDirs) == 0 && len(rt.extraDirs) == 0 {
		return nil
	}
	rt.Tools, err = buildTools(rt, plan, o, rt.journal)
	return err
}

// spillDir is where the bash tool keeps full outputs: the session's directory (existing or
// planned), or a fresh directory that Close removes when the run has no session.
func (rt *Runtime) spillDir(plan *newSession) (string, error) {
	switch {
	case rt.Session != nil:
		return rt.Session.Dir(), nil
	case plan != nil:
		return plan.dir, nil
	}
	if rt.spill == "" {
		// Created by the bash tool only when an output spills, so building tools writes nothing.
		rt.spill = filepath.Join(os.TempDir(), "rein-bash-"+kernel.NewID())
	}
	return rt.spill, nil
}
