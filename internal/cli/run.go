package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

// runOptions are the flags of a run.
type runOptions struct {
	print    bool
	mode     string
	provider string
	model    string
	baseURL  string
	apiKey   string
	script   string
	tools    string
	noTools  bool
	maxTurns int
	maxCost  float64
	retries  int
}

func (o *runOptions) register(c *cobra.Command) {
	f := c.Flags()
	f.BoolVarP(&o.print, "print", "p", false, "print mode: run the prompt (arguments or stdin) and print the final answer")
	f.StringVar(&o.mode, "mode", "print", "output mode: print (final text) or json (one JSON event per line)")
	f.StringVar(&o.provider, "provider", "", "model provider: anthropic, openai, openai-compat or script")
	f.StringVar(&o.model, "model", "", "model id (see rein models); default: the provider's default")
	f.StringVar(&o.baseURL, "base-url", "", "API base URL (required for openai-compat, e.g. http://localhost:11434/v1)")
	f.StringVar(&o.apiKey, "api-key", "", "API key (default: $ANTHROPIC_API_KEY / $OPENAI_API_KEY, then $REIN_HOME/auth.json)")
	f.StringVar(&o.script, "script", "", "scenario file for the offline script provider")
	f.StringVar(&o.tools, "tools", "", "comma-separated tools to offer (default: read,write,edit,bash,grep,find,ls)")
	f.BoolVar(&o.noTools, "no-tools", false, "offer no tools")
	f.IntVar(&o.maxTurns, "max-turns", 0, "stop after this many model turns (0: no limit)")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop once the run has cost this many US dollars (0: no limit)")
	f.IntVar(&o.retries, "max-retries", llm.DefaultRetryPolicy.MaxAttempts-1, "retries of a failed model call (rate limit, overload, 5xx, connection errors)")
}

func (o *runOptions) validate() error {
	if o.mode != "print" && o.mode != "json" {
		return fmt.Errorf("%w: --mode %q: want print or json", ErrUsage, o.mode)
	}
	if o.maxTurns < 0 {
		return fmt.Errorf("%w: --max-turns must not be negative", ErrUsage)
	}
	if o.retries < 0 {
		return fmt.Errorf("%w: --max-retries must not be negative", ErrUsage)
	}
	if o.maxCost < 0 {
		return fmt.Errorf("%w: --max-cost must not be negative", ErrUsage)
	}
	if o.noTools && o.tools != "" {
		return fmt.Errorf("%w: --tools and --no-tools exclude each other", ErrUsage)
	}
	return nil
}

func (o *runOptions) toolList() []string {
	if o.tools == "" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(o.tools, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// readPrompt takes the prompt from the arguments, else from stdin when it is not a terminal.
func readPrompt(e *env, args []string) (string, error) {
	if len(args) > 0 {
		return strings.Join(args, " "), nil
	}
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return "", fmt.Errorf("%w: no prompt: pass one (rein -p \"...\") or pipe it on stdin; the interactive UI is not built yet", ErrUsage)
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		return "", fmt.Errorf("%w: reading the prompt from stdin: %v", ErrUsage, err)
	}
	p := strings.TrimSpace(string(data))
	if p == "" {
		return "", fmt.Errorf("%w: the prompt is empty: pass one as an argument or on stdin", ErrUsage)
	}
	return p, nil
}

func runPrompt(e *env, o *runOptions, args []string) error {
	var jsonOut *jsonWriter
	if o.mode == "json" {
		jsonOut = &jsonWriter{enc: json.NewEncoder(e.stdout)}
	}
	err := o.validate()
	var out *kernel.Outcome
	var rt *system.Runtime
	if err == nil {
		var prompt string
		if prompt, err = readPrompt(e, args); err == nil {
			rt, out, err = runAgent(e, o, prompt, jsonOut)
		}
	}
	if jsonOut != nil {
		jsonOut.result(out, rt, err)
		if err != nil {
			return &reportedError{err}
		}
		return nil
	}
	if err != nil {
		return err
	}
	text := out.Final.Text()
	fmt.Fprint(e.stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(e.stdout)
	}
	return nil
}

func runAgent(e *env, o *runOptions, prompt string, jsonOut *jsonWriter) (*system.Runtime, *kernel.Outcome, error) {
	home, err := system.Home(e.getenv)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, nil, err
	}
	opts := system.Options{
		Provider: o.provider, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey, Script: o.script,
		Tools: o.toolList(), NoTools: o.noTools, MaxTurns: o.maxTurns, MaxCost: o.maxCost,
		Dir: dir, Home: home, Getenv: e.getenv,
	}
	opts.Retry = llm.DefaultRetryPolicy
	opts.Retry.MaxAttempts = o.retries + 1
	if jsonOut != nil {
		opts.Observe = jsonOut.event
	}
	rt, err := system.Build(opts)
	if err != nil {
		return nil, nil, err
	}
	defer rt.Close()
	out, err := rt.Agent.Run(e.ctx, nil, llm.UserText(prompt))
	return rt, out, err
}

// jsonWriter writes --mode json lines; events from parallel tools arrive serialized already.
type jsonWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (w *jsonWriter) event(ev kernel.Event) {
	we, ok := toWire(ev)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.enc.Encode(we)
}

func (w *jsonWriter) result(out *kernel.Outcome, rt *system.Runtime, err error) {
	r := wireResult{V: WireVersion, Type: "result", Status: "completed", ExitCode: ExitCode(err)}
	if out != nil {
		r.Status = string(out.Status)
		r.Turns = out.Turns
		r.Usage = toWireUsage(out.Usage)
		if out.Final != nil {
			r.Text = out.Final.Text()
		}
	} else if err != nil {
		r.Status = "error"
	}
	if rt != nil {
		r.Provider, r.Model = rt.Model.Provider, rt.Model.ID
	}
	if err != nil {
		r.Error = err.Error()
		var me *kernel.ModelError
		if errors.As(err, &me) && r.Status == "" {
			r.Status = string(kernel.StatusFailed)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.enc.Encode(r)
}
