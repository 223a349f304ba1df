package system

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// project is what the trust gate and the settings decide for a run.
type project struct {
	trust projectTrust
	// settings are the global settings, with the project's appended when it is trusted.
	settings Settings
	// asm is the assembled system prompt.
	asm *contextpack.Assembly
	// sources are the settings files of the run, rein's and Claude Code's (rein context).
	sources []SettingsSource
	// plugins are the Claude Code plugins whose hooks the run loads.
	plugins []Plugin
	// mode is the permission mode (permissions.defaultMode, see permmode.go), modeFrom the
	// file that set it ("" for the default).
	mode, modeFrom string
	// dirs are the additional directories the file tools may read and write.
	dirs []AdditionalDir
}

// openProject reads the settings, passes the project of dir through the trust gate and
// assembles the system prompt of a run offering tools. Build and Inspect both call it, so what
// `rein context` shows is what a run sends. est may be nil.
//
// Trust: the run's choice (--trust, --no-trust) wins, then the decision stored in trust.json
// (an allow only while the guarded files match the digests it recorded), then trust.mode (global is
// $REIN_HOME's settings, read by the caller). In mode "ask" an undecided project needs a decision only when it holds
// something the gate guards (.rein/SYSTEM.md, APPEND_SYSTEM.md, skills, .rein/settings.json;
// context files with trust.contextFiles "gated"): it is put to o.Confirm; without one a run
// fails with ErrTrustRequired, while an inspection (inspect) shows the project untrusted. A
// project holding nothing to guard never asks. Whatever an untrusted run ignores is named in
// one diagnostic.
func openProject(o Options, global Settings, dir string, tools *tool.Set, est contextpack.Estimator, inspect bool) (*project, error) {
	root := contextpack.ProjectRoot(dir)
	pr := &project{settings: global}
	var lines []contextpack.ToolLine
	for _, s := range tools.Specs() {
		lines = append(lines, contextpack.ToolLine{Name: s.Name, Snippet: s.Snippet})
	}
	in := contextpack.Inputs{Dir: dir, Root: root, Home: o.Home, UserHome: userHomeDir(), Tools: lines, Date: o.Now(),
		GateContextFiles: global.gateContextFiles(), Hidden: sandboxHidden(o)}
	// The untrusted view of the project, loaded once: the trust decision digests what it
	// leaves out, and an undecided project is assembled from it. A fixed system prompt loads
	// nothing: only the project's settings need a decision.
	var src *contextpack.Sources
	var untrusted []string
	if o.SystemPrompt == "" {
		src = contextpack.Load(in)
		untrusted = src.Untrusted
	}
	paths := guarded(root, o.Home, untrusted)
	pt, decided, err := decideTrust(o, global, dir, root, paths)
	if err != nil {
		return nil, err
	}
	if !decided {
		// Assemble untrusted first: what it leaves out is what a decision is needed for.
		if src != nil {
			pr.asm = contextpack.Assemble(in, src, est)
		}
		resources := shownPaths(root, paths)
		switch {
		case len(resources) == 0 && len(pt.changed) == 0:
			pt.why = "nothing to trust"
		case o.Confirm != nil:
			yes, err := o.Confirm(trustQuestion(pt, resources))
			if err != nil {
				return nil, fmt.Errorf("%w: asking whether to trust %s: %w", ErrTrustRequired, root, err)
			}
			if yes {
				if err := storeTrust(o.Home, root, trustEntry{Decision: TrustAllow, Files: digestFiles(root, paths)}); err != nil {
					return nil, fmt.Errorf("recording the trust decision: %w", err)
				}
				pt.trusted, pt.why, pr.asm = true, "approved", nil
			} else {
				pt.why = "not approved"
			}
		case inspect:
			pt.undecided = true
		default:
			return nil, trustRequired(pt, resources)
		}
	}
	pr.trust = pt
	if pt.trusted {
		local, err := ReadSettings(projectSettingsPath(root), false)
		if err != nil {
			return nil, err
		}
		if !sameFile(filepath.Dir(projectSettingsPath(root)), o.Home) {
			pr.settings = global.merge(local)
		}
	}
	pr.settings, pr.sources = withClaudeSettings(o, pr.settings, root, pt.trusted)
	var modeWarnings []string
	pr.mode, pr.modeFrom, modeWarnings = permissionMode(pr.settings)
	pr.settings.warnings = append(pr.settings.warnings, modeWarnings...)
	pr.dirs, modeWarnings = additionalDirs(pr.settings, root, dir)
	pr.settings.warnings = append(pr.settings.warnings, modeWarnings...)
	var installed []Plugin
	pr.settings, installed = enabledInstalled(o, pr.settings, root)
	if in.Plugins = pluginSkills(installed); len(in.Plugins) > 0 {
		pr.asm = nil // assembled before the trust decision, without the plugins' skills
	}
	if o.SystemPrompt != "" {
		pr.withPlugins(o, installed, nil)
		pr.asm = &contextpack.Assembly{Prompt: o.SystemPrompt, Diagnostics: pr.settings.warnings}
		return pr, nil
	}
	if pr.asm == nil {
		in.ProjectTrusted = pt.trusted
		pr.asm = contextpack.Build(in, est)
	}
	pr.withPlugins(o, installed, pr.asm)
	if !pt.trusted {
		if !slices.Equal(pr.asm.Untrusted, untrusted) {
			paths = guarded(root, o.Home, pr.asm.Untrusted) // what the guarded files were found from changed
		}
		if ignored := shownPaths(root, paths); len(ignored) > 0 {
			pr.asm.Diagnostics = append([]string{untrustedNotice(pt, ignored)}, pr.asm.Diagnostics...)
		}
	}
	pr.asm.Diagnostics = append(pr.asm.Diagnostics, pr.settings.warnings...)
	return pr, nil
}

// withPlugins adds the hooks of the run's plugins (see withPlugins) to pr's settings.
func (pr *project) withPlugins(o Options, installed []Plugin, asm *contextpack.Assembly) {
	var sources []SettingsSource
	pr.settings, pr.plugins, sources = withPlugins(o, pr.settings, installed, asm)
	pr.sources = append(pr.sources, sources...)
}

// toolSpecs are the tool schemas as a request carries them.
func toolSpecs(tools *tool.Set) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, s := range tools.Specs() {
		out = append(out, llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	return out
}

// Context is what the next model request of a run would carry, built without calling a model.
type Context struct {
	// Provider and Model are "" when no provider is configured.
	Provider, Model string
	ContextWindow   int
	MaxTokens       int
	// Session is the id of the session the run continues, "" for a new one.
	Session string
	// Estimator names how tokens are estimated (see contextpack.EstimatorFor).
	Estimator string
	// Trusted says whether the project's own rein resources load (see the trust gate).
	Trusted bool
	// Skill names the skill the prompt invokes with /NAME ("" when it invokes none): the
	// prompt shown is the skill's.
	Skill string
	// Settings are the settings files read, rein's then Claude Code's, then plugins' hook
	// files, with their state.
	Settings []SettingsSource
	// PermissionMode is the permission mode (see ModeDefault), PermissionModeFrom the settings
	// file that set it ("" for the default).
	PermissionMode, PermissionModeFrom string
	// AdditionalDirs are the directories outside the workspace the file tools may read and
	// write (permissions.additionalDirectories).
	AdditionalDirs []AdditionalDir
	// Hooks are the hooks configured, with their files; Plugins the Claude Code plugins whose
	// hooks load.
	Hooks   []HookEntry
	Plugins []Plugin
	System  *contextpack.Assembly
	Tools   []llm.ToolSpec
	// History is the conversation continued, as adapters send it (healed); Prompt is the new
	// user message, nil when a session is continued without one.
	History []llm.Message
	Prompt  *llm.Message
	// Sections: the system prompt's, then one per tool, per history message, and the prompt.
	Sections      []contextpack.Section
	Bytes, Tokens int
	// RequestBytes is the size of the request in rein's provider-neutral JSON encoding
	// (llm.Request); each provider's wire encoding differs somewhat.
	RequestBytes int
	// Reported is the context size by the provider's own count: the usage the last answer
	// reported, plus estimates for the messages after it; 0 when no answer reported usage.
	Reported int
}

// newSessionID stands in for the id of a session that does not exist yet, so the request
// size counts the 32 characters it will have.
const newSessionID = "00000000000000000000000000000000"

// Inspect builds the next request of the run o describes, with prompt as the new user message
// ("" for none), and measures it. It calls no model, needs no API key and writes nothing: a
// session is read without its writer lock. A session with interrupted work is shown before
// recovery settles it. With no provider configured at all, the request is still built; only
// the model-specific parts (estimator, output limit) fall back to defaults.
func Inspect(o Options, prompt string) (*Context, error) {
	if o.Getenv == nil {
		return nil, errors.New("system: Options.Getenv is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reg := llm.NewRegistry()
	if err := reg.LoadOverrides(filepath.Join(o.Home, "models.json")); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ws, err := tool.OpenWorkspace(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer ws.Close()
	c := &Context{}
	st, err := loadSession(o, ws.Dir)
	if err != nil {
		return nil, err
	}
	var history []llm.Message
	if st != nil {
		c.Session = st.Header.ID
		sessionDefaults(&o, func(k string) string { return st.Facts[k] })
		history = st.Context()
	}
	provider, err := resolveProvider(o)
	if err != nil && (o.Provider != "" || o.Script != "") {
		return nil, err
	}
	if err == nil {
		c.Provider = provider
		c.Model = o.Model
		if c.Model == "" {
			c.Model = llm.DefaultModel(provider)
		}
		if c.Model != "" {
			info, _ := reg.Lookup(provider, c.Model)
			c.ContextWindow, c.MaxTokens = info.ContextWindow, info.MaxOutput
		}
	}
	// The tools as a run builds them (their descriptions depend on the settings), recording
	// no processes: Inspect runs none.
	global, err := ReadSettings(filepath.Join(o.Home, SettingsFile), true)
	if err != nil {
		return nil, err
	}
	o.KeepBackground = o.KeepBackground || (global.Bash != nil && global.Bash.KeepBackground)
	tools, err := buildTools(&Runtime{Workspace: ws}, nil, o, nil)
	if err != nil {
		return nil, err
	}
	est := contextpack.EstimatorFor(c.Provider, c.Model)
	c.Estimator = est.Name()
	pr, err := openProject(o, global, ws.Dir, tools, est, true)
	if err != nil {
		return nil, err
	}
	c.System = pr.asm
	c.Trusted = pr.trust.trusted
	c.Settings, c.Hooks, c.Plugins = pr.sources, pr.settings.hookEntries(), pr.plugins
	c.PermissionMode, c.PermissionModeFrom, c.AdditionalDirs = pr.mode, pr.modeFrom, pr.dirs
	c.Tools = toolSpecs(tools)
	c.History = llm.Heal(history)
	if prompt != "" {
		m := llm.UserText(prompt)
		if s, args, ok := invokedSkill(pr.asm.Skills, prompt); ok {
			text, err := expandSkill(s, args)
			if err != nil {
				return nil, err
			}
			m = llm.UserText(text)
			c.Skill = s.Name
		}
		c.Prompt = &m
	}

	c.Sections = append(c.Sections, c.System.Sections...)
	for _, t := range c.Tools {
		c.Sections = append(c.Sections, contextpack.ToolSection(t, est))
	}
	lastUsage := -1 // the section index of the last answer with reported usage
	for _, m := range c.History {
		if m.Role == llm.RoleAssistant && m.Usage != nil && m.Usage.Total() > 0 {
			lastUsage = len(c.Sections)
			c.Reported = m.Usage.Total()
		}
		c.Sections = append(c.Sections, contextpack.MessageSection(contextpack.SectionMessage, m, est))
	}
	if c.Prompt != nil {
		c.Sections = append(c.Sections, contextpack.MessageSection(contextpack.SectionPrompt, *c.Prompt, est))
	}
	for i, s := range c.Sections {
		c.Bytes += s.Bytes
		c.Tokens += s.Tokens
		if lastUsage >= 0 && i > lastUsage {
			c.Reported += s.Tokens
		}
	}

	req := llm.Request{System: c.System.Prompt, Messages: c.History, Tools: c.Tools, MaxTokens: c.MaxTokens}
	if c.Prompt != nil {
		req.Messages = append(append([]llm.Message(nil), c.History...), *c.Prompt)
	}
	switch {
	case c.Session != "":
		req.SessionID = c.Session
	case o.Session.Mode != SessionNone:
		req.SessionID = newSessionID
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	c.RequestBytes = len(data)
	return c, nil
}

// loadSession reads, without locking it, the session a run of o would continue; nil when the
// run starts a new one.
func loadSession(o Options, cwd string) (*session.State, error) {
	var dir string
	switch o.Session.Mode {
	case SessionNew, SessionNone:
		return nil, nil
	case SessionContinue:
		sd, err := LatestSession(o.Home, cwd)
		if err != nil {
			return nil, err
		}
		dir = sd.Dir
	case SessionResume:
		sd, err := FindSession(o.Home, cwd, o.Session.Ref)
		if err != nil {
			return nil, err
		}
		dir = sd.Dir
	case SessionAt:
		abs, err := filepath.Abs(strings.TrimSuffix(o.Session.Ref, "/ledger.jsonl"))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(abs, "ledger.jsonl")); err != nil {
			return nil, nil // a run would create it
		}
		dir = abs
	default:
		return nil, fmt.Errorf("%w: this command does not take --fork", ErrConfig)
	}
	st, _, err := session.LoadAs(dir, SessionIDOf(dir))
	return st, err
}
