package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/proc"
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/tool"
)

// MaxTimeoutSeconds is the largest timeout a call may ask for (the largest whole number of
// seconds a 32-bit millisecond timer holds).
const MaxTimeoutSeconds = 2147483

// DefaultSecretEnv lists the environment variable names removed from the command's
// environment when [Options.StripEnv] is nil: every name that looks like a credential.
// Patterns use [path.Match] syntax and are matched against the upper-cased name; the names in
// [KeptEnv] are never removed.
var DefaultSecretEnv = []string{
	"*PASS*",       // PASSWORD, PGPASSWORD, TWINE_PASSWORD, *_PASSWD, *_PASSPHRASE
	"*PWD",         // MYSQL_PWD (PWD and OLDPWD are kept)
	"*TOKEN*",      // GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN, AWS_SESSION_TOKEN, *_TOKEN_FILE
	"*SECRET*",     // AZURE_CLIENT_SECRET, *_SECRET_ACCESS_KEY, CLIENT_SECRETS
	"*KEY*",        // ANTHROPIC_API_KEY, OPENAI_API_KEY, AWS_ACCESS_KEY_ID, *_PRIVATE_KEY
	"*CREDENTIAL*", // GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE
	"*COOKIE*",
	"*SESSION*", // AWS_SESSION_*, *_SESSION_ID
	"*_AUTH",    // NPM_CONFIG__AUTH, *_BASIC_AUTH
	"*DSN",      // SENTRY_DSN, *_DSN: URLs that carry a key
	"DATABASE_URL", "REDIS_URL", "MONGODB_URI", "*_DATABASE_URL",
	"AWS_*", "AZURE_*", "ARM_CLIENT_*", "GOOGLE_*", "GCLOUD_*", "CLOUDSDK_*", "DIGITALOCEAN_*",
	"HCLOUD_*", "VAULT_*", "DOCKER_AUTH_CONFIG", "KUBECONFIG",
}

// KeptEnv are names no pattern removes: the shell's own working-directory variables.
var KeptEnv = []string{"PWD", "OLDPWD"}

// defaultWaitDelay bounds how long Run waits for the output pipe to close after the shell
// exited or was killed.
const defaultWaitDelay = time.Second

// updateEvery throttles partial results.
const updateEvery = 100 * time.Millisecond

// Options configure the bash tool. The zero value is usable.
type Options struct {
	// Shell is the shell binary; empty picks /bin/bash, else bash on PATH, else sh.
	Shell string
	// DefaultTimeout applies to calls that give no timeout; zero means none.
	DefaultTimeout time.Duration
	// Env is the base environment; nil means os.Environ().
	Env []string
	// StripEnv lists name patterns ([path.Match] syntax, matched against the upper-cased name)
	// removed from the environment; nil means [DefaultSecretEnv], an empty non-nil slice
	// removes nothing.
	StripEnv []string
	// SessionEnv, when set, is called at each call with the environment after StripEnv and
	// returns the one the command gets: the session's own variables (settings, what
	// SessionStart hooks exported) are set deliberately and never stripped.
	SessionEnv func(env []string) []string
	// TempDir is where oversized output is spilled; empty means [os.TempDir].
	TempDir string
	// WaitDelay bounds the wait for the output pipe after the shell ends; zero means one second.
	WaitDelay time.Duration
	// Sandbox, when set, runs every command inside it (bubblewrap); the working directory
	// must lie inside its workspace. Nil runs commands directly.
	Sandbox *sandbox.Sandbox
	// KeepBackground leaves what a command starts in the background running after the
	// command ends (deliberate daemons); by default every process a command started is
	// ended with it (see internal/proc). It changes nothing in the sandbox, which ends
	// everything in it when the command ends.
	KeepBackground bool
	// Journal, when set, records each command's processes so that a later rein ends what
	// they left if this rein dies (see internal/proc).
	Journal *proc.Journal
}

// Bash is the bash tool. It is safe for concurrent use.
type Bash struct {
	dir  string
	opts Options
}

// New returns the bash tool running commands in dir.
func New(dir string, opts Options) *Bash {
	if opts.Shell == "" {
		opts.Shell = findShell()
	}
	if opts.StripEnv == nil {
		opts.StripEnv = DefaultSecretEnv
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = defaultWaitDelay
	}
	return &Bash{dir: dir, opts: opts}
}

func findShell() string {
	if fi, err := os.Stat("/bin/bash"); err == nil && !fi.IsDir() {
		return "/bin/bash"
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	if p, err := exec.LookPath("sh"); err == nil {
		return p
	}
	return "sh"
}

const schema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Bash command to execute"},
    "description": {"type": "string", "description": "What the command does, in a few words (optional; shown to hooks)"},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 2147483, "description": "Timeout in seconds (optional, no default timeout)"}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Spec describes the tool.
func (b *Bash) Spec() tool.Spec {
	desc := "Execute a bash command in the current working directory. Returns stdout and stderr " +
		"merged. Output is truncated to the last " + tool.MaxLinesText + " lines or " + tool.MaxBytesText + " (whichever is hit first); if truncated, " +
		"the full output is saved to a temp file. Optionally provide a timeout in seconds."
	if !b.opts.KeepBackground && b.opts.Sandbox == nil {
		desc += " Processes a command starts in the background (&, nohup, setsid) are ended when the command ends."
	}
	if b.opts.Sandbox != nil {
		desc += " Commands run in a sandbox: no network, only the working directory and a private /tmp are " +
			"writable, the home directory is not visible, and background processes end with the command."
	}
	return tool.Spec{
		Name:        "bash",
		Description: desc,
		Snippet:     "Execute bash commands (ls, grep, find, etc.)",
		Schema:      json.RawMessage(schema),
		Sequential:  false,
		Replay:      tool.ReplayNever,
	}
}

type args struct {
	Command string `json:"command"`
	// Description says what the command does; it changes nothing about how it runs.
	Description string   `json:"description"`
	Timeout     *float64 `json:"timeout"`
}

// Details is the structured outcome placed in [tool.Result.Details].
type Details struct {
	// ExitCode is the shell's exit status; nil when it was killed or did not exit normally.
	ExitCode *int `json:"exitCode,omitempty"`
	// Signal names the signal that ended the shell when it was not one Run sent.
	Signal   string `json:"signal,omitempty"`
	TimedOut bool   `json:"timedOut,omitempty"`
	Aborted  bool   `json:"aborted,omitempty"`
	// Truncation describes how the returned output was cut (tail kept); nil when it was not.
	Truncation *tool.Truncation `json:"truncation,omitempty"`
	// FullOutputPath is the file holding the whole output when it was truncated.
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

// Run executes the command.
func (b *Bash) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Result{}, fmt.Errorf("invalid arguments: %w", err)
	}
	timeout := b.opts.DefaultTimeout
	timeoutText := strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)
	if a.Timeout != nil {
		t := *a.Timeout
		if math.IsNaN(t) || math.IsInf(t, 0) || t <= 0 || t > MaxTimeoutSeconds {
			return tool.Result{}, fmt.Errorf("invalid timeout %v: give a number of seconds greater than 0 and at most %d, or omit it", t, MaxTimeoutSeconds)
		}
		timeout = time.Duration(t * float64(time.Second))
		timeoutText = strconv.FormatFloat(t, 'f', -1, 64)
	}
	if fi, err := os.Stat(b.dir); err != nil || !fi.IsDir() {
		return tool.Result{}, fmt.Errorf("working directory %s does not exist or is not a directory", b.dir)
	}

	if ctx.Err() != nil {
		return tool.Result{Content: tool.TextResult("Command aborted").Content, Details: &Details{Aborted: true}, IsError: true}, nil
	}

	out := newOutput(b.opts.TempDir, call.Update)
	defer out.close()

	argv := []string{b.opts.Shell, "-c", a.Command}
	env := filterEnv(b.opts.Env, b.opts.StripEnv)
	if b.opts.SessionEnv != nil {
		env = b.opts.SessionEnv(env)
	}
	if sb := b.opts.Sandbox; sb != nil {
		prep, err := sb.Prepare(argv, b.dir)
		if err != nil {
			return tool.Result{}, fmt.Errorf("the command was not run: %w", err)
		}
		defer prep.Release() // after proc.Run: the sandbox is gone with bwrap
		argv, env = prep.Args, sb.Env(env)
	}
	pr := proc.Run(ctx, proc.Spec{
		Path: argv[0], Args: argv, Dir: b.dir, Env: env,
		// The same comparable writer for both streams: exec gives them one pipe, so the
		// output keeps its arrival order.
		Stdout: out, Stderr: out,
		Timeout: timeout, WaitDelay: b.opts.WaitDelay,
		// The sandbox ends everything in it when the shell ends; the group kill takes bwrap's
		// own helper process.
		Contain:         !b.opts.KeepBackground && b.opts.Sandbox == nil,
		KillGroupOnExit: b.opts.Sandbox != nil,
		LeaveRunning:    b.opts.KeepBackground && b.opts.Sandbox == nil,
		Journal:         b.opts.Journal,
	})

	switch pr.Outcome {
	case proc.StartFailed:
		if b.opts.Sandbox != nil {
			return tool.Result{}, fmt.Errorf("start the sandbox (%s); the command was not run: %w", argv[0], pr.Err)
		}
		return tool.Result{}, fmt.Errorf("start shell %s: %w", b.opts.Shell, pr.Err)
	case proc.WaitFailed:
		return tool.Result{}, fmt.Errorf("run command: %w", pr.Err)
	}
	text, d := out.result()
	var trailer string
	switch pr.Outcome {
	case proc.Canceled:
		d.Aborted = true
		trailer = "Command aborted"
	case proc.TimedOut:
		d.TimedOut = true
		trailer = fmt.Sprintf("Command timed out after %s seconds", timeoutText)
	case proc.Signaled:
		d.Signal = pr.Signal.String()
		trailer = fmt.Sprintf("Command was killed by signal %d (%s)", int(pr.Signal), pr.Signal)
	case proc.Exited:
		code := pr.Code
		d.ExitCode = &code
		if code != 0 {
			trailer = fmt.Sprintf("Command exited with code %d", code)
		}
	}
	// A timed-out or aborted command had its whole group killed already; what the sweep finds
	// still dying is no news (and racy to report), so the note is for commands that ended on
	// their own.
	if len(pr.Ended) > 0 && pr.Outcome != proc.TimedOut && pr.Outcome != proc.Canceled {
		text = appendNote(text, endedNotice(pr.Ended))
	}
	res := tool.Result{Details: d}
	if trailer != "" {
		res.IsError = true
		if text == noOutput {
			text = trailer
		} else {
			text += "\n\n" + trailer
		}
	}
	res.Content = tool.TextResult(text).Content
	return res, nil
}

// appendNote adds a line to the output text ("(no output)" gives way to it).
func appendNote(text, note string) string {
	if text == noOutput {
		return note
	}
	return text + "\n\n" + note
}

// endedNotice tells the model which processes the command left running were ended.
func endedNotice(ended []proc.Ended) string {
	const show = 5
	names := make([]string, 0, show)
	for _, e := range ended[:min(len(ended), show)] {
		names = append(names, e.String())
	}
	more := ""
	if len(ended) > show {
		more = fmt.Sprintf(" and %d more", len(ended)-show)
	}
	return fmt.Sprintf("[Ended %d process(es) the command left running: %s%s]", len(ended), strings.Join(names, ", "), more)
}

// filterEnv returns base (os.Environ() when nil) without the variables whose names match a
// pattern.
func filterEnv(base, strip []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !secretName(name, strip) {
			env = append(env, kv)
		}
	}
	return env
}

func secretName(name string, patterns []string) bool {
	upper := strings.ToUpper(name)
	for _, k := range KeptEnv {
		if upper == k {
			return false
		}
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToUpper(p), upper); ok {
			return true
		}
	}
	return false
}
