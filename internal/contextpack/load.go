package contextpack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Limits of what [Load] reads.
const (
	// MaxFileBytes caps each context, SYSTEM.md and APPEND_SYSTEM.md file; the rest is cut at
	// a line boundary and a notice says so.
	MaxFileBytes = 64 << 10
	// MaxSkills caps the skills indexed; further skills are skipped with a diagnostic.
	MaxSkills = 1000
	// maxSkillDepth bounds how deep below a skills directory a SKILL.md is looked for: deep
	// enough for collections laid out as plugins (<dir>/<collection>/plugins/<plugin>/skills/<skill>).
	maxSkillDepth = 6
	// maxSkillDirs bounds the directories looked at below one skills directory.
	maxSkillDirs = 2000
)

// ContextFileNames are the context file names looked for in each directory, in order of
// preference: only the first one present in a directory is loaded (a CLAUDE.md beside an
// AGENTS.md is usually a copy or a pointer to it). In a project directory .claude/CLAUDE.md
// comes last, and CLAUDE.local.md is read after whichever loaded. Lower- and mixed-case
// spellings such as agents.md are not context files.
var ContextFileNames = []string{"AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}

// File is one file that enters the prompt.
type File struct {
	// Path is the absolute path the file was found at.
	Path string
	// Text is the content: UTF-8 BOM dropped, CRLF turned into LF, invalid UTF-8 replaced,
	// cut to MaxFileBytes at a line boundary when Truncated.
	Text string
	// Size is the file's size on disk.
	Size      int64
	Truncated bool
	// ImportedBy is the context file whose @path import brought this one in ("" for a
	// context file found by name); Depth is the number of import hops from that file.
	ImportedBy string
	Depth      int
}

// Skill is one valid skill.
type Skill struct {
	Name        string
	Description string
	// Path is the absolute path of the skill's SKILL.md, its directory's symbolic links
	// resolved; Dir is that directory.
	Path, Dir string
	// AllowedTools is the allowed-tools field: permission rules as written in the skill.
	AllowedTools []string
	// DisableModelInvocation keeps the skill out of the model's index; the user may still
	// invoke it (unless UserInvocable is false).
	DisableModelInvocation bool
	UserInvocable          bool
	// Body is the text after the frontmatter; set by [ParseSkill] and [ReadSkillBody], never
	// kept by [Load].
	Body string
	// Plugin is the namespace of the installed plugin the skill comes from ("" for none):
	// its Name is then "PLUGIN:NAME", as Claude Code names plugin skills.
	Plugin string
}

// Sources are the files [Load] found for one working directory.
type Sources struct {
	// Root is the repository root: the nearest directory at or above the working directory
	// holding .git, or the working directory itself when there is none.
	Root string
	// System replaces the default prompt; Append is appended to the prompt. Either may be nil.
	System, Append *File
	// Context are the context files in prompt order (see [Load]), each followed by the files
	// it imports.
	Context []File
	// Skills are the valid skills, in discovery order (nearest project directory first, the
	// user's directories last); a name is taken by the first skill that claims it.
	Skills []Skill
	// Diagnostics say what was skipped, cut or loaded with a warning, and why, in discovery order.
	Diagnostics []string
	// PluginDirs are the directories below the skills directories searched that hold a Claude
	// Code plugin's manifest or hooks file (.claude-plugin/plugin.json, hooks/hooks.json),
	// whether or not they hold skills, reached without a symbolic link; in discovery order.
	PluginDirs []string
	// Untrusted are the project files and directories that were not read because the
	// project is not trusted (absolute paths, in discovery order). Empty when the project is
	// trusted, or holds nothing the trust gate guards.
	Untrusted []string
}

// SkillDirNames are the skills directories of a project directory, in the order they are
// scanned.
var SkillDirNames = []string{filepath.Join(".rein", "skills"), filepath.Join(".agents", "skills"), filepath.Join(".claude", "skills")}

// Load finds and reads the files that shape the system prompt of a run in in.Dir:
//
//   - context files: ~/.claude/CLAUDE.md (in.UserHome), $REIN_HOME's first of
//     [ContextFileNames], then for each directory from the repository root down to the
//     working directory the first of [ContextFileNames] and .claude/CLAUDE.md, then its
//     CLAUDE.local.md; each followed by the files it imports with @path (see imports);
//   - SYSTEM.md and APPEND_SYSTEM.md: the nearest .rein/ file from the working directory up to
//     the repository root, else $REIN_HOME's;
//   - skills: directories holding a SKILL.md under .rein/skills/, .agents/skills/ and
//     .claude/skills/ of each directory from the working directory up to the repository
//     root, then $REIN_HOME/skills/, ~/.agents/skills/ and ~/.claude/skills/, searched
//     maxSkillDepth levels deep (collections, plugin layouts); last the skills of
//     in.Plugins, each <plugin>/skills/<name>/SKILL.md (or a SKILL.md at the plugin's root
//     when it has no skills directory), named "PLUGIN:NAME" (see pluginSkills).
//
// Project files that configure or extend rein (.rein/SYSTEM.md, .rein/APPEND_SYSTEM.md,
// project skills directories) are read only when in.ProjectTrusted; context files are too
// when in.GateContextFiles, else always. What the gate kept out is listed in
// Sources.Untrusted. A project .rein directory that is $REIN_HOME itself is not a project
// directory (its files load as the global ones). A project file that is a symlink resolving
// outside the repository root is refused.
//
// Load never fails: an unreadable, oversized or invalid file becomes a diagnostic.
func Load(in Inputs) *Sources {
	l := &loader{src: &Sources{}, trusted: in.ProjectTrusted}
	dir := filepath.Clean(in.Dir)
	home := realDir(in.Home)
	l.userHome = realDir(in.UserHome)
	root := in.Root
	if root == "" {
		root = findRoot(dir)
	}
	l.src.Root, l.root = root, root
	chain := ancestors(root, dir) // outermost first

	if l.userHome != "" {
		l.contextFile(filepath.Join(l.userHome, ".claude", "CLAUDE.md"), "", true)
	}
	if home != "" {
		l.contextIn(home, "", true)
	}
	for _, d := range chain {
		l.contextIn(d, root, in.ProjectTrusted || !in.GateContextFiles)
	}
	// isHome reports whether the project directory p is $REIN_HOME (rein run in the parent of
	// its own home directory).
	isHome := func(p string) bool { return home != "" && sameFile(p, home) }

	// Nearest first for SYSTEM.md, APPEND_SYSTEM.md and skills.
	near := make([]string, len(chain))
	for i, d := range chain {
		near[len(chain)-1-i] = d
	}
	for _, w := range []struct {
		name string
		dst  **File
	}{{"SYSTEM.md", &l.src.System}, {"APPEND_SYSTEM.md", &l.src.Append}} {
		for _, d := range near {
			p := filepath.Join(d, ".rein", w.name)
			if !l.exists(p) || isHome(filepath.Join(d, ".rein")) {
				continue
			}
			if !in.ProjectTrusted {
				l.src.Untrusted = append(l.src.Untrusted, p)
				continue
			}
			if f, ok := l.read(p, root); ok {
				*w.dst = f
				break
			}
		}
		if *w.dst == nil && home != "" {
			if p := filepath.Join(home, w.name); exists(p) {
				if f, ok := l.read(p, ""); ok {
					*w.dst = f
				}
			}
		}
	}

	for _, d := range near {
		for _, sub := range SkillDirNames {
			p := filepath.Join(d, sub)
			if !l.exists(p) || isHome(filepath.Dir(p)) {
				continue
			}
			if !in.ProjectTrusted {
				l.src.Untrusted = append(l.src.Untrusted, p)
				continue
			}
			l.skillsUnder(p, root)
		}
	}
	var user []string
	if home != "" {
		user = append(user, filepath.Join(home, "skills"))
	}
	if l.userHome != "" {
		user = append(user, filepath.Join(l.userHome, ".agents", "skills"), filepath.Join(l.userHome, ".claude", "skills"))
	}
	for _, p := range user {
		if l.exists(p) && !slices.ContainsFunc(near, func(d string) bool { return within(p, d) }) {
			l.skillsUnder(p, "")
		}
	}
	for _, p := range in.Plugins {
		l.pluginSkills(p)
	}
	return l.src
}

// pluginSkills indexes the skills of the installed plugin p as Claude Code does: each
// directory of <plugin>/skills holding a SKILL.md, one level deep, or, when the plugin has no
// skills directory, a SKILL.md at its root. Their names are namespaced, "PLUGIN:NAME", so
// they never take a name from the user's or the project's skills.
func (l *loader) pluginSkills(p Plugin) {
	l.ns = p.Name
	defer func() { l.ns = "" }()
	dir := filepath.Join(p.Dir, "skills")
	if !exists(dir) {
		if root := filepath.Join(p.Dir, "SKILL.md"); exists(root) {
			l.skill(root, "")
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		l.diag("%s: skipped: %v", dir, err)
		return
	}
	for _, e := range entries {
		sk := filepath.Join(dir, e.Name(), "SKILL.md")
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case exists(sk):
			if len(l.src.Skills) >= MaxSkills {
				l.diag("%s: skipped: more than %d skills; the rest are not indexed", sk, MaxSkills)
				return
			}
			l.skill(sk, "")
		case oddManifest(filepath.Join(dir, e.Name())) != "":
			l.diag("%s: skipped: the file must be named SKILL.md (capitals)", oddManifest(filepath.Join(dir, e.Name())))
		case e.IsDir() || e.Type()&fs.ModeSymlink != 0:
			l.diag("%s: skipped: a plugin's skill is a directory of %s holding a SKILL.md", filepath.Join(dir, e.Name()), dir)
		}
	}
}

// realDir is dir cleaned with its symbolic links resolved ("" stays "").
func realDir(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

type loader struct {
	src *Sources
	// root is the project root; userHome the user's home directory ("" when unknown);
	// trusted says the project is trusted.
	root, userHome string
	trusted        bool
	seen           []os.FileInfo     // the context files loaded, to load none twice
	names          map[string]string // skill name → SKILL.md path
	capped         bool
	dirs           int             // directories looked at below the current skills directory
	ns             string          // the namespace of the plugin whose skills are indexed ("" for none)
	absent         map[string]bool // dot directories (.rein, .claude, .agents) found missing, see exists
}

// dotDir reports whether name is one of the directories whose files Load looks for one by one in every directory of
// the chain: one stat of a missing one answers for all of them.
func dotDir(name string) bool { return name == ".rein" || name == ".claude" || name == ".agents" }

// exists is [exists] that first asks whether p's directory, when it is a dotDir, is
// there at all (remembered for the rest of the Load): a missing directory holds no file, so
// the lookups of the files below it are spared. Through a symbolic link the directory
// counts as there (os.Stat follows it, as the lookup of the file does).
func (l *loader) exists(p string) bool {
	if dir := filepath.Dir(p); dotDir(filepath.Base(dir)) {
		missing, known := l.absent[dir]
		if !known {
			_, err := os.Stat(dir)
			missing = errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
			if l.absent == nil {
				l.absent = make(map[string]bool)
			}
			l.absent[dir] = missing
		}
		if missing {
			return false
		}
	}
	return exists(p)
}

func (l *loader) diag(format string, args ...any) {
	l.src.Diagnostics = append(l.src.Diagnostics, fmt.Sprintf(format, args...))
}

// read reads the file at p, bounded by MaxFileBytes; problems become diagnostics.
func (l *loader) read(p, limit string) (*File, bool) {
	if limit != "" {
		if err := inside(p, limit); err != nil {
			l.diag("%s: skipped: %v", p, err)
			return nil, false
		}
	}
	data, size, err := readBounded(p, MaxFileBytes)
	if err != nil {
		l.diag("%s: skipped: %v", p, err)
		return nil, false
	}
	f := &File{Path: p, Size: size}
	if size > MaxFileBytes || len(data) > MaxFileBytes {
		f.Truncated = true
		data = data[:MaxFileBytes]
		if i := bytes.LastIndexByte(data, '\n'); i > 0 {
			data = data[:i+1]
		}
	}
	f.Text = normalize(data)
	if f.Truncated {
		l.diag("%s: truncated: %d of its %d bytes are shown", p, len(f.Text), size)
	}
	return f, true
}

// skillsUnder indexes the skills below the skills directory dir (see skillsIn).
func (l *loader) skillsUnder(dir, limit string) {
	l.dirs = 0
	l.skillsIn(dir, limit, 0, false)
}

// skillsIn indexes the skills below dir: each directory holding a SKILL.md is a skill (its own
// subdirectories are its resources); other directories are searched down to maxSkillDepth
// (.git and node_modules are not). Every file or directory passed over that looks like a
// skill gets a diagnostic. A directory that is not a skill but holds a Claude Code plugin's
// manifest or hooks file is recorded in Sources.PluginDirs, unless it was reached through a
// symbolic link (linked): what a trust digest of the skills directory covers is its own tree.
func (l *loader) skillsIn(dir, limit string, depth int, linked bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.diag("%s: skipped: %v", dir, err)
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			l.diag("%s: skipped: %v", p, err)
			continue
		}
		if !fi.IsDir() {
			if depth == 0 && strings.EqualFold(filepath.Ext(name), ".md") && !isDocFile(name) {
				l.diag("%s: skipped: a skill is a directory holding a SKILL.md; move this file to %s", p, filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name)), "SKILL.md"))
			}
			continue
		}
		manifest := filepath.Join(p, "SKILL.md")
		if !exists(manifest) {
			if odd := oddManifest(p); odd != "" {
				l.diag("%s: skipped: the file must be named SKILL.md (capitals)", odd)
				continue
			}
			if l.dirs++; l.dirs > maxSkillDirs {
				if l.dirs == maxSkillDirs+1 {
					l.diag("%s: not searched: more than %d directories below this skills directory", p, maxSkillDirs)
				}
				continue
			}
			viaLink := linked || e.Type()&fs.ModeSymlink != 0
			if !viaLink && (exists(filepath.Join(p, ".claude-plugin", "plugin.json")) || exists(filepath.Join(p, "hooks", "hooks.json"))) {
				l.src.PluginDirs = append(l.src.PluginDirs, realDir(p))
			}
			if depth+1 < maxSkillDepth {
				l.skillsIn(p, limit, depth+1, viaLink)
			} else if hasSubdir(p) {
				l.diag("%s: not searched: skills are looked for at most %d levels below a skills directory", p, maxSkillDepth)
			}
			continue
		}
		if len(l.src.Skills) >= MaxSkills {
			if !l.capped {
				l.capped = true
				l.diag("%s: skipped: more than %d skills; the rest are not indexed", manifest, MaxSkills)
			}
			return
		}
		l.skill(manifest, limit)
	}
}

// isDocFile reports whether name is a file a skills collection usually holds beside its
// skills (a README, a licence, a changelog).
func isDocFile(name string) bool {
	base := strings.ToUpper(strings.TrimSuffix(name, filepath.Ext(name)))
	for _, d := range []string{"README", "LICENSE", "LICENCE", "CHANGELOG", "CONTRIBUTING", "AGENTS", "CLAUDE", "SECURITY", "NOTICE", "CODE_OF_CONDUCT"} {
		if base == d {
			return true
		}
	}
	return false
}

// oddManifest returns the path of a skill manifest in dir spelt in another case (skill.md),
// or "".
func oddManifest(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(e.Name(), "SKILL.md") {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

func hasSubdir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.IsDir() && !strings.HasPrefix(e.Name(), ".") })
}

func (l *loader) skill(p, limit string) {
	if limit != "" {
		if err := inside(p, limit); err != nil {
			l.diag("%s: skill skipped: %v", p, err)
			return
		}
	}
	data, _, err := readBounded(p, MaxFileBytes)
	if err != nil {
		l.diag("%s: skill skipped: %v", p, err)
		return
	}
	s, warns, err := ParseSkill(filepath.Base(filepath.Dir(p)), []byte(normalize(data)))
	if err != nil {
		l.diag("%s: skill skipped: %v", p, err)
		return
	}
	for _, w := range warns {
		l.diag("%s: skill loaded with a warning: %s", p, w)
	}
	s.Body = ""
	if l.ns != "" {
		s.Name, s.Plugin = l.ns+":"+s.Name, l.ns
	}
	s.Dir = realDir(filepath.Dir(p))
	s.Path = filepath.Join(s.Dir, "SKILL.md")
	if l.names == nil {
		l.names = map[string]string{}
	}
	if prev, dup := l.names[s.Name]; dup {
		l.diag("%s: skill skipped: the name %q is taken by %s", p, s.Name, prev)
		return
	}
	l.names[s.Name] = p
	l.src.Skills = append(l.src.Skills, s)
}

// ReadSkillBody reads the SKILL.md at path and returns the skill with its Body (the text
// after the frontmatter), as a user invocation sends it.
func ReadSkillBody(path string) (Skill, error) {
	data, _, err := readBounded(path, MaxFileBytes)
	if err != nil {
		return Skill{}, err
	}
	s, _, err := ParseSkill(filepath.Base(filepath.Dir(path)), []byte(normalize(data)))
	if err != nil {
		return Skill{}, err
	}
	s.Path, s.Dir = path, filepath.Dir(path)
	return s, nil
}

// ProjectRoot returns the project directory of a run in dir: the nearest directory at or
// above dir holding .git, or dir itself when there is none. dir should be absolute and
// symlink-resolved.
func ProjectRoot(dir string) string { return findRoot(filepath.Clean(dir)) }

// findRoot returns the nearest directory at or above dir that holds .git (a directory, or a
// file in worktrees and submodules); dir itself when there is none.
func findRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// ancestors returns the directories from root down to dir, both included; root must be dir
// or one of its ancestors.
func ancestors(root, dir string) []string {
	var rev []string
	for d := dir; ; d = filepath.Dir(d) {
		rev = append(rev, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	out := make([]string, len(rev))
	for i, d := range rev {
		out[len(rev)-1-i] = d
	}
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// inside checks that p, with every symlink resolved, lies in dir, which must be free of
// symlinks itself (an ancestor of the resolved working directory). Only the components below
// dir are looked at unless one of them is a symlink.
func inside(p, dir string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil || !within(p, dir) {
		return fmt.Errorf("it is outside %s", dir)
	}
	cur := dir
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		if !within(real, dir) {
			return fmt.Errorf("it resolves to %s, outside %s", real, dir)
		}
		return nil
	}
	return nil
}

func within(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// readBounded reads at most max+1 bytes of the regular file at p and returns them with the
// file's size.
func readBounded(p string, max int) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, 0, err
	}
	return data, max64(fi.Size(), int64(len(data))), nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// normalize drops a UTF-8 BOM, turns CRLF into LF and replaces invalid UTF-8 (including a
// character cut by truncation) with U+FFFD.
func normalize(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
