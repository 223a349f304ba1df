package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/proc"
)

// Package is the name of the package that provides bwrap.
const Package = "bubblewrap"

// ErrUnavailable: bubblewrap is not installed or cannot build a sandbox here.
var ErrUnavailable = errors.New("the OS sandbox is unavailable")

// SystemPaths are the host directories every sandbox sees read-only (those that exist).
var SystemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// FallbackBwrap is where bwrap is looked for when it is not on PATH.
const FallbackBwrap = "/usr/bin/bwrap"

// DefaultProtect lists the workspace-relative entries through which a command could make
// the host run code later, kept read-only inside the sandbox when [Config.Protect] is nil:
// the git directory (or a worktree's .git file) with its hooks, configuration, attributes and
// fsmonitor hook; rein's project directory; Claude Code's; MCP server definitions; and the
// agents' directory holding skills. See [Sandbox.Prepare] for what "protected" means.
var DefaultProtect = []string{".git", ".rein", ".claude", ".mcp.json", ".agents"}

// Config describes a sandbox.
type Config struct {
	// Workspace is the absolute directory commands may write. It must not be, or contain,
	// one of [SystemPaths].
	Workspace string
	// ReadOnly lists further absolute host paths made visible read-only (missing ones are
	// skipped).
	ReadOnly []string
	// Writable lists further absolute directories commands may write (a run's additional
	// directories; missing ones are skipped). Like the workspace, none may be or contain one
	// of [SystemPaths], and the Protect paths hold inside each too.
	Writable []string
	// Hide lists absolute host paths that must stay invisible even when they lie inside the
	// workspace or a read-only path ($REIN_HOME): they are covered with an empty read-only
	// file system. A path the sandbox does not mount anyway needs nothing. Hiding the
	// workspace itself, or a directory holding it, is refused.
	Hide []string
	// Mask lists absolute paths (files or directories, inside the workspace, a read-only or a
	// writable path) whose content commands must not read: the paths the read deny rules cover. Each
	// that exists is resolved through its symbolic links and covered — a file by /dev/null
	// bound read-only over it (reading fails or yields nothing), a directory by an empty
	// read-only file system — so no command reads it by any name it computes. Missing paths and paths the sandbox does not mount
	// need nothing; masking the workspace itself, or a directory holding it, is refused.
	Mask []string
	// Protect lists workspace-relative paths that a sandboxed command can neither change,
	// rename, replace nor create (see [Sandbox.Prepare]). Nil means [DefaultProtect]; an
	// empty non-nil slice protects nothing. [New] fails when one of them, or a directory on
	// the way to it, is a symbolic link: a mount cannot keep a link from being replaced.
	Protect []string
	// Bwrap is the bwrap program; empty means "bwrap" on PATH, else Fallback.
	Bwrap string
	// Fallback is where bwrap is looked for when it is not on PATH; empty means
	// [FallbackBwrap].
	Fallback string
}

// protected is one protected path and the writable directory it lies in.
type protected struct{ base, target string }

// Sandbox builds bwrap command lines. It is immutable and safe for concurrent use.
type Sandbox struct {
	bwrap string
	ws    string
	// mounts is the fixed part of the bwrap arguments, up to the workspace's bind.
	mounts []string
	// protect are the protected paths (absolute, clean, sorted, none below another), each
	// with the writable directory holding it.
	protect []protected
	// hide are the mounts covering hidden paths, after the protected ones.
	hide []string
}

// unavailable builds an ErrUnavailable error with a message saying what to do.
func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, args...))
}

// New checks cfg, finds bwrap and prepares the sandbox's mounts. A missing bwrap is an
// error wrapping [ErrUnavailable] that names the package to install.
func New(cfg Config) (*Sandbox, error) {
	if runtime.GOOS != "linux" {
		return nil, unavailable("the sandbox uses bubblewrap, which runs only on Linux (this is %s); run without --sandbox", runtime.GOOS)
	}
	bwrap, err := findBwrap(cfg.Bwrap, cfg.Fallback)
	if err != nil {
		return nil, err
	}
	ws := cfg.Workspace
	if !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("sandbox: workspace %q is not an absolute path", ws)
	}
	ws = filepath.Clean(ws)
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: workspace %s is not a directory", ws)
	}
	for _, sp := range SystemPaths {
		if within(ws, sp) {
			return nil, fmt.Errorf("sandbox: the workspace %s is or contains the system directory %s, which must stay read-only; run rein in a project directory", ws, sp)
		}
	}
	s := &Sandbox{bwrap: bwrap, ws: ws}
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-user-try", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL",
	}
	visible := []string{ws} // what is mounted, for Hide
	for _, p := range SystemPaths {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			a = append(a, "--symlink", target, p)
		default:
			a = append(a, "--ro-bind", p, p)
			visible = append(visible, p)
		}
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
	for _, p := range cfg.ReadOnly {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: read-only path %q is not absolute", p)
		}
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		} else {
			continue
		}
		a = append(a, "--ro-bind", p, p)
		visible = append(visible, p)
	}
	a = append(a, "--bind", ws, ws)
	protect, err := protectedPaths(ws, cfg.Protect)
	if err != nil {
		return nil, err
	}
	for _, t := range protect {
		s.protect = append(s.protect, protected{base: ws, target: t})
	}
	for _, p := range cfg.Writable {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: writable directory %q is not absolute", p)
		}
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		} else {
			continue
		}
		for _, sp := range SystemPaths {
			if within(p, sp) {
				return nil, fmt.Errorf("sandbox: the writable directory %s is or contains the system directory %s, which must stay read-only", p, sp)
			}
		}
		a = append(a, "--bind", p, p)
		visible = append(visible, p)
		more, err := protectedPaths(p, cfg.Protect)
		if err != nil {
			return nil, err
		}
		for _, t := range more {
			s.protect = append(s.protect, protected{base: p, target: t})
		}
	}
	var hide []string
	for _, h := range cfg.Hide {
		if h == "" {
			continue
		}
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("sandbox: hidden path %q is not absolute", h)
		}
		h = filepath.Clean(h)
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		} else {
			continue // nothing there to see
		}
		if within(h, ws) {
			return nil, fmt.Errorf("sandbox: %s must stay hidden, but the workspace %s lies inside it; run rein from a directory outside it", h, ws)
		}
		if !slices.ContainsFunc(visible, func(v string) bool { return within(v, h) }) {
			continue
		}
		fi, err := os.Stat(h)
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot hide %s: %w", h, err)
		}
		if fi.IsDir() {
			hide = append(hide, "--tmpfs", h, "--remount-ro", h)
		} else {
			hide = append(hide, "--ro-bind", os.DevNull, h)
		}
	}
	masks, err := maskArgs(cfg.Mask, ws, visible)
	if err != nil {
		return nil, err
	}
	s.mounts, s.hide = a, append(hide, masks...)
	return s, nil
}

// protectedPaths checks the protected paths of cfg (nil: DefaultProtect) and returns them
// absolute and sorted, leaving out any that lies below another. A symbolic link on the way
// to one is refused.
func protectedPaths(ws string, rels []string) ([]string, error) {
	if rels == nil {
		rels = DefaultProtect
	}
	var out []string
	for _, rel := range rels {
		if filepath.IsAbs(rel) || rel == "" {
			return nil, fmt.Errorf("sandbox: protected path %q must be relative to the workspace", rel)
		}
		p := filepath.Join(ws, rel)
		if !within(ws, p) || p == ws {
			return nil, fmt.Errorf("sandbox: protected path %q is not inside the workspace", rel)
		}
		for q := p; q != ws; q = filepath.Dir(q) {
			if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				return nil, fmt.Errorf("sandbox: %s is a symbolic link, and the sandbox cannot keep a link from being replaced, so %s could not be protected: replace the link by what it points to, or run without --sandbox", q, rel)
			}
		}
		out = append(out, p)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	kept := out[:0]
	for _, p := range out {
		if len(kept) == 0 || !within(kept[len(kept)-1], p) {
			kept = append(kept, p)
		}
	}
	return kept, nil

}

// maskArgs returns the bwrap arguments covering each path of mask that exists and is
// mounted (visible lists what is): /dev/null over a file, an empty read-only tmpfs over a
// directory. A path is resolved through its symbolic links first, so the file covered is
// the one a command would read.
func maskArgs(mask []string, ws string, visible []string) ([]string, error) {
	var a []string
	seen := map[string]bool{}
	for _, m := range mask {
		if !filepath.IsAbs(m) {
			return nil, fmt.Errorf("sandbox: masked path %q is not absolute", m)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(m))
		if err != nil || seen[real] {
			continue // nothing there to read, or covered already
		}
		seen[real] = true
		if within(real, ws) {
			return nil, fmt.Errorf("sandbox: the read rules deny %s, which is or holds the workspace %s, so no command could run; narrow the rule", m, ws)
		}
		if !slices.ContainsFunc(visible, func(v string) bool { return within(v, real) }) {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot mask %s: %w", real, err)
		}
		if fi.IsDir() {
			a = append(a, "--tmpfs", real, "--remount-ro", real)
		} else {
			a = append(a, "--ro-bind", os.DevNull, real)
		}
	}
	return a, nil
}

// findBwrap resolves the bwrap program.
func findBwrap(p, fallback string) (string, error) {
	if p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", unavailable("bubblewrap program %s: %v; install the %s package or fix the path", p, err, Package)
		}
		return p, nil
	}
	if p, err := exec.LookPath("bwrap"); err == nil {
		return p, nil
	}
	if fallback == "" {
		fallback = FallbackBwrap
	}
	if _, err := exec.LookPath(fallback); err == nil {
		return fallback, nil
	}
	return "", unavailable("bwrap was not found on PATH or in /usr/bin: install the %s package (Debian, Ubuntu: apt-get install %s; Fedora: dnf install %s; Arch: pacman -S %s) or run without --sandbox; rein never runs a command unsandboxed when a sandbox was asked for",
		Package, Package, Package, Package)
}

// within reports whether p is dir or lies below it (both clean and absolute).
func within(dir, p string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Workspace returns the sandbox's writable directory (symlinks resolved).
func (s *Sandbox) Workspace() string { return s.ws }

// Bwrap returns the bwrap program the sandbox runs.
func (s *Sandbox) Bwrap() string { return s.bwrap }

// Prepared is a command line ready to run in the sandbox. Release must be called once the
// command, and everything it started, has ended (bwrap --die-with-parent sees to the
// latter when bwrap exits).
type Prepared struct {
	// Args is the command line: the bwrap program first.
	Args  []string
	holds []*placeholder
}

// Release gives up the placeholders the command held and removes those no other command
// holds, so the host's tree is as it was. It is safe to call more than once.
func (p *Prepared) Release() {
	for _, h := range p.holds {
		h.release()
	}
	p.holds = nil
}

// Prepare returns the command line that runs argv inside the sandbox with dir as working
// directory. dir must be absolute and lie inside the workspace.
//
// Each protected path ([Config.Protect]) is bound read-only onto itself, which makes it a
// mount point: inside the sandbox it cannot be written, renamed, removed or replaced
// (EROFS, EBUSY), and neither can anything below it. Each directory on the way to a nested
// protected path is bound onto itself writable, so it stays writable but cannot be renamed
// away either. A protected path that does not exist is held by a placeholder: an empty
// directory with mode 0500, created on the host, bound read-only, so nothing of that name
// can be created inside; [Prepared.Release] removes it again once no sandboxed command holds
// it (an flock on the placeholder counts the holders across processes). A placeholder left
// behind by a rein that was killed is taken over and removed by the next sandboxed command.
func (s *Sandbox) Prepare(argv []string, dir string) (*Prepared, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("sandbox: empty command")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("sandbox: working directory %q is not absolute", dir)
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if !within(s.ws, dir) {
		return nil, fmt.Errorf("sandbox: working directory %s is outside the sandbox's workspace %s", dir, s.ws)
	}
	p := &Prepared{}
	mounts, err := s.protectMounts(p)
	if err != nil {
		p.Release()
		return nil, err
	}
	out := make([]string, 0, len(s.mounts)+len(mounts)+len(s.hide)+len(argv)+7)
	out = append(out, s.bwrap)
	out = append(out, s.mounts...)
	out = append(out, mounts...)
	out = append(out, s.hide...)
	out = append(out, "--remount-ro", "/", "--chdir", dir, "--")
	p.Args = append(out, argv...)
	return p, nil
}

// protectMounts returns the binds that protect s.protect as they stand now, taking the
// placeholders it needs into p.
func (s *Sandbox) protectMounts(p *Prepared) ([]string, error) {
	var out []string
	bound := map[string]bool{} // directories on the way, already bound onto themselves
	for _, pr := range s.protect {
		target := pr.target
		rel, _ := filepath.Rel(pr.base, target)
		cur := pr.base
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			descend, err := protectStep(p, cur, cur == target)
			if err != nil {
				return nil, err
			}
			if !descend {
				out = append(out, "--ro-bind", cur, cur)
				break
			}
			if !bound[cur] {
				bound[cur] = true
				out = append(out, "--bind", cur, cur)
			}
		}
	}
	return out, nil
}

// protectStep looks at cur, a protected path (last) or a directory on the way to one. It
// reports whether to go on below cur; otherwise cur is to be bound read-only, and when it
// did not exist p holds a placeholder there.
func protectStep(p *Prepared, cur string, last bool) (descend bool, err error) {
	for range 5 {
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist) || err == nil && isPlaceholder(cur, fi):
			h, err := holdPlaceholder(cur)
			if err != nil {
				return false, fmt.Errorf("sandbox: cannot hold the place of the protected %s: %w; the command was not run", cur, err)
			}
			if h == nil {
				continue // something else appeared there meanwhile: look again
			}
			p.holds = append(p.holds, h)
			return false, nil
		case err != nil:
			return false, fmt.Errorf("sandbox: protecting %s: %w; the command was not run", cur, err)
		case fi.Mode()&os.ModeSymlink != 0:
			return false, fmt.Errorf("sandbox: %s is a symbolic link, and the sandbox cannot keep a link from being replaced: replace the link by what it points to, or run without --sandbox", cur)
		case last || !fi.IsDir():
			return false, nil
		default:
			return true, nil
		}
	}
	return false, fmt.Errorf("sandbox: %s keeps changing while the sandbox is prepared; the command was not run", cur)
}

// Env returns env adjusted for the sandbox: TMPDIR is /tmp (the private one) and
// XDG_CACHE_HOME is /tmp/.cache, since the host's are not visible.
func (s *Sandbox) Env(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "TMPDIR" || name == "XDG_CACHE_HOME" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR=/tmp", "XDG_CACHE_HOME=/tmp/.cache")
}

// Check runs a trivial command in the sandbox and fails, wrapping [ErrUnavailable], when
// bwrap cannot build the sandbox here (for example when user namespaces are disabled).
func (s *Sandbox) Check(ctx context.Context) error {
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	p, err := s.Prepare([]string{truePath}, s.ws)
	if err != nil {
		return err
	}
	defer p.Release()
	var stderr bytes.Buffer
	res := proc.Run(ctx, proc.Spec{Path: p.Args[0], Args: p.Args, Env: s.Env(os.Environ()), Stderr: &stderr, Timeout: 30 * time.Second})
	if res.Outcome != proc.Exited || res.Code != 0 {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = res.String()
		}
		return unavailable("bubblewrap (%s) is installed but cannot build a sandbox here: %s; user namespaces may be disabled (see the sysctls kernel.unprivileged_userns_clone and user.max_user_namespaces, or AppArmor's restrictions on unprivileged user namespaces), or run without --sandbox",
			s.bwrap, msg)
	}
	return nil
}
