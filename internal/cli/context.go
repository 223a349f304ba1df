package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/internal/contextpack"
	"github.com/reinhq/rein/internal/llm/watchdog"
	"github.com/reinhq/rein/internal/system"
)

// ContextVersion is the version of `rein context --json` output.
const ContextVersion = 1

func newContextCmd(e *env) *cobra.Command {
	o := &runOptions{mode: "print", idle: watchdog.DefaultIdle} // no stream is read: the idle flag is not offered
	var prompt string
	var asJSON, full bool
	c := &cobra.Command{
		Use:   "context [flags] [prompt]",
		Short: "Show what the next model request would carry, without calling a model",
		Long: `rein context builds the next model request exactly as a run would — system prompt (default or
.rein/SYSTEM.md, APPEND_SYSTEM.md, context files, skills index, date and directory), tool
schemas, the session's messages when continuing one, and the prompt — and prints each part
with its source, bytes and estimated tokens. No model is called and no key is needed. It never
asks for trust: an undecided project is shown untrusted, with a notice (pass --trust to see
what a trusted run would load).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if prompt != "" && len(args) > 0 {
				return fmt.Errorf("%w: give the prompt with -p or as arguments, not both", ErrUsage)
			}
			if prompt == "" {
				prompt = strings.Join(args, " ")
			}
			if err := o.validate(); err != nil {
				return err
			}
			trust, _ := o.trust.choice() // checked by validate
			home, err := system.Home(e.getenv)
			if err != nil {
				return err
			}
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			ctx, err := system.Inspect(system.Options{
				Provider: o.provider, Model: o.model, BaseURL: o.baseURL, Script: o.script,
				Tools: o.toolList(), NoTools: o.noTools, Dir: dir, Home: home, Getenv: e.getenv,
				Session: o.sessionChoice(), Trust: trust,
			}, prompt)
			if err != nil {
				return err
			}
			if asJSON {
				return writeContextJSON(e, ctx)
			}
			for _, d := range ctx.System.Diagnostics {
				fmt.Fprintf(e.stderr, "rein: context: %s\n", d)
			}
			return writeContext(e, ctx, dir, full)
		},
	}
	f := c.Flags()
	f.StringVarP(&prompt, "prompt", "p", "", "the prompt the request would carry (default: the arguments)")
	f.StringVar(&o.provider, "provider", "", "model provider: anthropic, openai, openai-compat or script")
	f.StringVar(&o.model, "model", "", "model id; decides the token estimator (an offline tokenizer for OpenAI models)")
	f.StringVar(&o.baseURL, "base-url", "", "API base URL")
	f.StringVar(&o.script, "script", "", "scenario file for the offline script provider")
	f.StringVar(&o.tools, "tools", "", "comma-separated tools to offer (default: read,write,edit,bash,grep,find,ls)")
	f.BoolVar(&o.noTools, "no-tools", false, "offer no tools")
	f.BoolVarP(&o.cont, "continue", "c", false, "show the next request of the latest session of this directory")
	f.StringVar(&o.resume, "resume", "", "show the next request of the session with this id (or unique id prefix)")
	f.StringVar(&o.sessionAt, "session", "", "show the next request of the session with this id, or at this path")
	f.BoolVar(&asJSON, "json", false, "print one JSON object (sections, totals, the system prompt, diagnostics)")
	f.BoolVar(&full, "full", false, "also print the assembled system prompt")
	o.trust.register(c)
	return c
}

func writeContext(e *env, c *system.Context, dir string, full bool) error {
	w := e.stdout
	if c.Provider == "" {
		fmt.Fprintf(w, "model: none configured (pass --provider or --script); tokens estimated with %s\n", c.Estimator)
	} else {
		fmt.Fprintf(w, "model: %s/%s (context window %d, output limit %d); tokens estimated with %s\n",
			c.Provider, c.Model, c.ContextWindow, c.MaxTokens, c.Estimator)
	}
	if c.Session != "" {
		fmt.Fprintf(w, "session: %s (%d messages)\n", c.Session, len(c.History))
	}
	if c.Skill != "" {
		fmt.Fprintf(w, "skill: the prompt invokes %s; its instructions are the prompt\n", c.Skill)
	}
	writeSettingsSources(w, c.Settings)
	if c.PermissionModeFrom != "" {
		fmt.Fprintf(w, "permission mode: %s (permissions.defaultMode in %s)\n", c.PermissionMode, c.PermissionModeFrom)
	}
	for _, d := range c.AdditionalDirs {
		fmt.Fprintf(w, "additional directory: %s (permissions.additionalDirectories in %s)\n", d.Path, d.From)
	}
	writeHooks(w, c.Plugins, c.Hooks)
	fmt.Fprintln(w)
	type row struct{ name, source, bytes, tokens string }
	rows := []row{{"SECTION", "SOURCE", "BYTES", "TOKENS"}}
	for _, s := range c.Sections {
		rows = append(rows, row{s.Name, sourceOf(s, dir), fmt.Sprint(s.Bytes), fmt.Sprint(s.Tokens)})
	}
	rows = append(rows, row{"total", "", fmt.Sprint(c.Bytes), fmt.Sprint(c.Tokens)})
	var wn, ws, wb, wt int
	for _, r := range rows {
		wn, ws, wb, wt = max(wn, len(r.name)), max(ws, len(r.source)), max(wb, len(r.bytes)), max(wt, len(r.tokens))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %-*s  %*s  %*s\n", wn, r.name, ws, r.source, wb, r.bytes, wt, r.tokens)
	}
	fmt.Fprintf(w, "\nrequest: %d bytes of JSON (rein's provider-neutral encoding; each provider's differs a little)\n", c.RequestBytes)
	if c.ContextWindow > 0 {
		fmt.Fprintf(w, "window: ~%d of %d tokens (%.1f%%)\n", c.Tokens, c.ContextWindow, 100*float64(c.Tokens)/float64(c.ContextWindow))
	}
	if c.Reported > 0 {
		fmt.Fprintf(w, "reported: %d tokens by the provider's usage of the last answer plus estimates for what follows it\n", c.Reported)
	}
	if full {
		fmt.Fprintf(w, "\n--- system prompt ---\n%s", c.System.Prompt)
	}
	return nil
}

// sourceOf names where a section comes from: a path (relative to dir inside it; an imported
// context file also names the file importing it), a tool, a message role, or (built-in) for
// rein's own text.
func sourceOf(s contextpack.Section, dir string) string {
	switch {
	case s.Source == "":
		return "(built-in)"
	case s.Name == contextpack.SectionTool || s.Name == contextpack.SectionMessage || s.Name == contextpack.SectionPrompt:
		return s.Source
	case s.ImportedBy != "":
		return contextpack.DisplayPath(dir, s.Source) + " (@ from " + contextpack.DisplayPath(dir, s.ImportedBy) + ")"
	}
	return contextpack.DisplayPath(dir, s.Source)
}

// contextJSON is the versioned output of `rein context --json`.
type contextJSON struct {
	V             int           `json:"v"`
	Provider      string        `json:"provider"`
	Model         string        `json:"model"`
	ContextWindow int           `json:"contextWindow,omitempty"`
	MaxTokens     int           `json:"maxTokens,omitempty"`
	Session       string        `json:"session,omitempty"`
	Skill         string        `json:"skill,omitempty"`
	Estimator     string        `json:"estimator"`
	Sections      []sectionJSON `json:"sections"`
	Total         sizeJSON      `json:"total"`
	RequestBytes  int           `json:"requestBytes"`
	Reported      int           `json:"reportedTokens,omitempty"`
	System        string        `json:"system"`
	Diagnostics   []string      `json:"diagnostics"`
	// Settings are the settings files, rein's then Claude Code's, with their state.
	Settings []system.SettingsSource `json:"settings"`
	// Hooks are the hooks configured, each with its file; Plugins the Claude Code plugins
	// whose hooks load.
	Hooks   []system.HookEntry `json:"hooks,omitempty"`
	Plugins []system.Plugin    `json:"plugins,omitempty"`
	// PermissionMode is the permission mode a run applies (permissions.defaultMode).
	PermissionMode string `json:"permissionMode"`
	// AdditionalDirs are the directories outside the workspace the file tools read and write.
	AdditionalDirs []system.AdditionalDir `json:"additionalDirectories,omitempty"`
}

type sectionJSON struct {
	Name       string `json:"name"`
	Source     string `json:"source,omitempty"`
	ImportedBy string `json:"importedBy,omitempty"`
	Bytes      int    `json:"bytes"`
	Tokens     int    `json:"tokens"`
}

type sizeJSON struct {
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
}

func writeContextJSON(e *env, c *system.Context) error {
	out := contextJSON{V: ContextVersion, Provider: c.Provider, Model: c.Model, ContextWindow: c.ContextWindow,
		MaxTokens: c.MaxTokens, Session: c.Session, Skill: c.Skill, Estimator: c.Estimator, Total: sizeJSON{c.Bytes, c.Tokens},
		RequestBytes: c.RequestBytes, Reported: c.Reported, System: c.System.Prompt,
		Diagnostics: append([]string{}, c.System.Diagnostics...), Settings: append([]system.SettingsSource{}, c.Settings...),
		Hooks: c.Hooks, Plugins: c.Plugins, PermissionMode: c.PermissionMode, AdditionalDirs: c.AdditionalDirs}
	for _, s := range c.Sections {
		out.Sections = append(out.Sections, sectionJSON{Name: s.Name, Source: s.Source, ImportedBy: s.ImportedBy, Bytes: s.Bytes, Tokens: s.Tokens})
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
