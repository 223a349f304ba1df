package system

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/hooks"
	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/anthropic"
	"github.com/reinhq/rein/internal/llm/openai"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/script"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/telemetry"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fstool"
	"github.com/reinhq/rein/internal/tool/grep"
	"github.com/reinhq/rein/internal/tool/shell"
)

// Options are the resolved inputs of a run.
type Options struct {
	Provider string
	Model    string
	BaseURL  string
	APIKey   string
	// Script is the scenario file of the script provider.
	Script string
	// Tools selects tools by name; nil means the default set. NoTools offers none.
	Tools   []string
	NoTools bool
	// Budgets.
	MaxTurns int
	MaxCost  float64
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
	// HTTPClient is used by network providers; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Retry overrides llm.DefaultRetryPolicy when MaxAttempts > 0.
	Retry llm.RetryPolicy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Session says which session ledger records the run.
	Session SessionChoice
	// KeepRecent is how many recent tokens compaction keeps verbatim (0: the default).
	KeepRecent int
	// Sandbox runs bash (and approved commands) in the bubblewrap OS sandbox (--sandbox);
	// without a working bwrap the run stops with ErrConfig.
	Sandbox bool
	// Trust is the run's own say about trusting the project (--trust, --no-trust).
	Trust TrustChoice
	// Confirm asks the user a yes/no question on the terminal (an undecided project's trust,
	// a call an "ask" permission rule or a hook holds); nil in a non-interactive run, which
	// refuses instead.
	Confirm func(question string) (bool, error)
	// Notice shows the user one line: a hook that failed, a hook's message. nil drops them.
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
)

// SessionChoice selects the session of a run.
type SessionChoice struct {
	Mode SessionMode
	Ref  string
}

// Runtime is a built run: the agent plus what it owns.
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
	// hooks makes the hooks of each agent (see hookWiring).
	hooks *hookWiring
}

// Close ends the agent (its session_end hooks run) and releases the workspace and the session.
func (r *Runtime) Close() error {
	if r.Agent != nil {
		_ = r.Agent.End(context.Background(), hooks.EndExit) // failures are reported as they happen
	}
	var err error
	if r.Session != nil {
		err = r.Session.Close()
	}
	return errors.Join(err, r.Workspace.Close())
}

// DefaultTools is the tool set offered when none is selected.
var DefaultTools = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// Providers lists the provider names rein knows.
var Providers = []string{llm.ProviderAnthropic, llm.ProviderOpenAI, llm.ProviderOpenAICompat, llm.ProviderScript}

// Build resolves o into a Runtime.
func Build(o Options) (*Runtime, error) {
	if o.Getenv == nil {
		return nil, errors.New("system: Options.Getenv is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reg := llm.NewRegistry()
	if err := reg.LoadOverrides(filepath.Join(o.Home, "models.json")); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	policy := llm.DefaultRetryPolicy
	if o.Retry.MaxAttempts > 0 {
		policy = o.Retry
	}
	ws, err := tool.OpenWorkspace(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	rt := &Runtime{Workspace: ws}
	fail := func(err error) (*Runtime, error) {
		rt.Close()
		return nil, err
	}
	// An existing session brings its model configuration; a new one is created only once the
	// configuration is known to work, so a mistake leaves no empty session behind.
	if o.Session.Mode != SessionNew {
		if err := openSession(o, rt, policy); err != nil {
			return fail(err)
		}
		if rt.Session != nil {
			sessionDefaults(&o, rt.Session.Fact)
		}
	}
	provider, err := resolveProvider(o)
	if err != nil {
		return fail(err)
	}
	modelID := o.Model
	if modelID == "" {
		modelID = llm.DefaultModel(provider)
	}
	if modelID == "" {
		return fail(fmt.Errorf("%w: provider %s has no default model; pass --model", ErrConfig, provider))
	}
	info, _ := reg.Lookup(provider, modelID)
	model, keySource, err := buildModel(o, provider, info)
	if err != nil {
		return fail(err)
	}
	rt.KeySource = keySource
	model = llm.Retry(model, policy)
	if !o.Sandbox {
		global, err := ReadSettings(filepath.Join(o.Home, SettingsFile), true)
		if err != nil {
			return fail(err)
		}
		o.Sandbox = global.Sandbox
	}
	if rt.Tools, err = buildTools(ws, o); err != nil {
		return fail(err)
	}
	// The same assembly `rein context` shows (see Inspect); estimates are not needed here. The
	// trust gate may refuse, so it comes before a new session is created.
	pr, err := openProject(o, ws.Dir, rt.Tools, nil, false)
	if err != nil {
		return fail(err)
	}
	rt.System, rt.Trusted = pr.asm, pr.trust.trusted
	pol, err := newPolicy(pr.settings.Permissions, ws.Dir, pr.trust.root, o.Home)
	if err != nil {
		return fail(err)
	}
	if o.Session.Mode == SessionNew {
		if err := openSession(o, rt, policy); err != nil {
			return fail(err)
		}
	}
	rt.hooks = &hookWiring{config: pr.settings.Hooks, dir: pr.trust.root, cwd: ws.Dir, confirm: o.Confirm, notice: o.Notice}
	if rt.hooks.dir == "" {
		rt.hooks.dir = ws.Dir
	}
	agentHooks, err := rt.hooks.forAgent(rt.Session, rt.Resumed, info.ID)
	if err != nil {
		return fail(err)
	}
	var rec kernel.Recorder = &kernel.Memory{}
	sessionID := ""
	if rt.Session != nil {
		rec, sessionID = rt.Session, rt.Session.ID()
		if err := recordConfig(rt.Session, provider, info.ID, o); err != nil {
			return fail(err)
		}
	}
	// Telemetry wraps the model (after retries, so one span is one logical request) and the
	// recorder, and observes the events; it changes nothing they do.
	inst := o.Tracer.Instrument(telemetry.Subject{SessionID: sessionID, Provider: provider, Model: info.ID,
		MaxTokens: info.MaxOutput, Tools: rt.Tools.Names()})
	model, rec = inst.Model(model), inst.Recorder(rec)
	agent, err := kernel.New(kernel.Config{
		Model:     model,
		Tools:     rt.Tools,
		Gate:      &permissionGate{policy: pol, confirm: o.Confirm},
		Hooks:     agentHooks,
		Recorder:  rec,
		System:    rt.System.Prompt,
		MaxTurns:  o.MaxTurns,
		MaxCost:   o.MaxCost,
		MaxTokens: info.MaxOutput,
		SessionID: sessionID,
		Observe:   inst.Observe(o.Observe),
		Now:       o.Now,
		Inbox:     o.Inbox,
		Compactor: &contextpack.Compactor{Model: model, ContextWindow: info.ContextWindow, KeepRecent: o.KeepRecent},
	})
	if err != nil {
		return fail(err)
	}
	info.Provider = provider
	rt.Agent, rt.Model = agent, info
	return rt, nil
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

// openSession opens or creates the run's session ledger as o.Session says.
func openSession(o Options, rt *Runtime, policy llm.RetryPolicy) error {
	opts := session.Options{Retry: session.RetryPolicy{MaxAttempts: policy.MaxAttempts}}
	project := ProjectSessions(o.Home, rt.Workspace.Dir)
	create := func(dir string, id string) error {
		s, err := session.Create(dir, session.Meta{ID: id, Cwd: rt.Workspace.Dir}, opts)
		rt.Session = s
		return err
	}
	open := func(dir string) error {
		s, rep, err := session.Open(dir, opts)
		rt.Session, rt.Opened, rt.Resumed = s, rep, err == nil
		return err
	}
	switch o.Session.Mode {
	case SessionNone:
		return nil
	case SessionNew:
		id := kernel.NewID()
		return create(filepath.Join(project, id), id)
	case SessionContinue:
		sd, err := LatestSession(o.Home, rt.Workspace.Dir)
		if err != nil {
			return err
		}
		return open(sd.Dir)
	case SessionResume:
		sd, err := FindSession(o.Home, rt.Workspace.Dir, o.Session.Ref)
		if err != nil {
			return err
		}
		return open(sd.Dir)
	case SessionAt:
		dir, err := filepath.Abs(strings.TrimSuffix(o.Session.Ref, "/ledger.jsonl"))
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "ledger.jsonl")); err == nil {
			return open(dir)
		}
		return create(dir, filepath.Base(dir))
	case SessionFork:
		ref, entry, _ := strings.Cut(o.Session.Ref, "@")
		sd, err := FindSession(o.Home, rt.Workspace.Dir, ref)
		if err != nil {
			return err
		}
		parent, _, err := session.Load(sd.Dir)
		if err != nil {
			return err
		}
		if entry != "" && parent.Entries[entry] == nil {
			if e, err := findEntry(parent, entry); err == nil {
				entry = e
			} else {
				return err
			}
		}
		id := kernel.NewID()
		s, err := session.Fork(parent, entry, filepath.Join(project, id), session.Meta{ID: id, Cwd: rt.Workspace.Dir}, opts)
		rt.Session = s
		return err
	}
	return fmt.Errorf("system: unknown session mode %d", o.Session.Mode)
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
		return "", fmt.Errorf("%w: no provider configured: pass --provider (%s) with a key, or --script FILE for the offline script model; `rein demo` runs without either",
			ErrConfig, strings.Join(Providers, ", "))
	}
	for _, known := range Providers {
		if p == known {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: unknown provider %q; known providers: %s", ErrConfig, p, strings.Join(Providers, ", "))
}

func buildModel(o Options, provider string, info llm.ModelInfo) (llm.Model, KeySource, error) {
	if provider == llm.ProviderScript {
		if o.Script == "" {
			return nil, KeyNone, fmt.Errorf("%w: the script provider needs --script FILE (see docs/script-format.md)", ErrConfig)
		}
		m, err := script.Load(o.Script)
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
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
	baseURL := o.BaseURL
	if baseURL == "" {
		baseURL = info.BaseURL
	}
	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	switch provider {
	case llm.ProviderAnthropic:
		if key == "" {
			return nil, KeyNone, missingKey(provider)
		}
		return anthropic.New(anthropic.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput}), src, nil
	case llm.ProviderOpenAI:
		if key == "" {
			return nil, KeyNone, missingKey(provider)
		}
		api := info.API
		if api != llm.APIOpenAIChat {
			api = llm.APIOpenAIResponses
		}
		m, err := openai.New(openai.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput, API: api})
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		return m, src, nil
	default: // openai-compat
		if baseURL == "" {
			return nil, KeyNone, fmt.Errorf("%w: --provider openai-compat needs --base-url (e.g. http://localhost:11434/v1 for ollama)", ErrConfig)
		}
		m, err := openaicompat.New(openaicompat.Config{Model: info.ID, BaseURL: baseURL, APIKey: key, HTTPClient: client,
			Pricing: info.Cost, MaxTokens: info.MaxOutput})
		if err != nil {
			return nil, KeyNone, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		return m, src, nil
	}
}

func missingKey(provider string) error {
	return fmt.Errorf("%w: no API key for %s: pass --api-key, set %s, or store one with `rein auth set %s`",
		ErrConfig, provider, EnvKey(provider), provider)
}

func buildTools(ws *tool.Workspace, o Options) (*tool.Set, error) {
	ws.Protected = workspaceProtected(o)
	sb, err := openSandbox(o, ws)
	if err != nil {
		return nil, err
	}
	if o.NoTools {
		return tool.New()
	}
	all, err := tool.New(
		fstool.Read(ws), fstool.Write(ws), fstool.Edit(ws),
		shell.New(ws.Dir, shell.Options{Sandbox: sb}),
		grep.New(ws, grep.Options{}),
		fstool.Find(ws), fstool.Ls(ws),
	)
	if err != nil {
		return nil, err
	}
	names := o.Tools
	if names == nil {
		names = DefaultTools
	}
	set, err := all.Select(names)
	if err != nil {
		return nil, fmt.Errorf("%w: --tools: %v", ErrConfig, err)
	}
	return set, nil
}

// NewModel builds the model of a provider outside an interactive run (a delivery-run stage):
// the same key resolution (environment, auth.json), model registry (with models.json
// overrides) and adapters as Build, wrapped in llm.Retry with llm.DefaultRetryPolicy. An empty
// model means the provider's default; script is the scenario file of the script provider. The
// key stays inside the adapter: neither the model info nor an error carries it.
func NewModel(home, provider, model, baseURL, script string, getenv func(string) string) (llm.Model, llm.ModelInfo, error) {
	if getenv == nil {
		return nil, llm.ModelInfo{}, errors.New("system: NewModel needs getenv")
	}
	o := Options{Provider: provider, Model: model, BaseURL: baseURL, Script: script, Home: home, Getenv: getenv}
	p, err := resolveProvider(o)
	if err != nil {
		return nil, llm.ModelInfo{}, err
	}
	reg := llm.NewRegistry()
	if err := reg.LoadOverrides(filepath.Join(home, "models.json")); err != nil {
		return nil, llm.ModelInfo{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if model == "" {
		model = llm.DefaultModel(p)
	}
	if model == "" {
		return nil, llm.ModelInfo{}, fmt.Errorf("%w: provider %s has no default model; set the model", ErrConfig, p)
	}
	info, _ := reg.Lookup(p, model)
	m, _, err := buildModel(o, p, info)
	if err != nil {
		return nil, llm.ModelInfo{}, err
	}
	return llm.Retry(m, llm.DefaultRetryPolicy), info, nil
}
