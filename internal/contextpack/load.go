package contextpack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Limits of what [Load] reads.
const (
	// MaxFileBytes caps each context, SYSTEM.md and APPEND_SYSTEM.md file; the rest is cut at
	// a line boundary and a notice says so.
	MaxFileBytes = 64 << 10
	// MaxSkills caps the skills indexed; further skills are skipped with a diagnostic.
	MaxSkills = 1000
	// maxSkillDepth bounds how deep below a skills directory a SKILL.md is looked for.
	maxSkillDepth = 3
)

// ContextFileNames are the context file names looked for in each directory, in order of
// preference: only the first one present in a directory is loaded (a CLAUDE.md beside an
// AGENTS.md is usually a copy or a pointer to it). Lower- and mixed-case spellings such as
// agents.md are not context files.
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
}

// Skill is one valid skill of the index.
type Skill struct {
	Name        string
	Description string
	// Path is the absolute path of the skill's SKILL.md.
	Path string
}

// Sources are the files [Load] found for one working directory.
type Sources struct {
	// Root is the repository root: the nearest directory at or above the working directory
	// holding .git, or the working directory itself when there is none.
	Root string
	// System replaces the default prompt; Append is appended to the prompt. Either may be nil.
	System, Append *File
	// Context are the context files, global first, then from Root down to the working
	// directory.
	Context []File
	// Skills are the valid skills, in discovery order (nearest project directory first, the
	// global directory last); a name is taken by the first skill that claims it.
	Skills []Skill
	// Diagnostics say what was skipped or cut and why, in discovery order.
	Diagnostics []string
	// Untrusted are the project files and directories that were not read because the
	// project is not trusted (absolute paths, in discovery order). Empty when the project is
	// trusted, or holds nothing the trust gate guards.
	Untrusted []string
}

// Load finds and reads the files that shape the system prompt of a run in in.Dir:
//
//   - context files (see [ContextFileNames]): $REIN_HOME's, then one per directory from the
//     repository root down to the working directory;
//   - SYSTEM.md and APPEND_SYSTEM.md: the nearest .rein/ file from the working directory up to
//     the repository root, else $REIN_HOME's;
//   - skills: directories holding a SKILL.md under .rein/skills/ and .agents/skills/ of each
//     directory from the working directory up to the repository root, then $REIN_HOME/skills/.
//
// Project files that configure or extend rein (.rein/SYSTEM.md, .rein/APPEND_SYSTEM.md,
// .rein/skills/, .agents/skills/) are read only when in.ProjectTrusted; context files are
// too when in.GateContextFiles, else always. What the gate kept out is listed in
// Sources.Untrusted. A project .rein directory that is $REIN_HOME itself is not a project
// directory (its files load as the global ones). A project file that is a symlink resolving
// outside the repository root is refused.
//
// Load never fails: an unreadable, oversized or invalid file becomes a diagnostic.
func Load(in Inputs) *Sources {
	l := &loader{src: &Sources{}}
	dir := filepath.Clean(in.Dir)
	home := ""
	if in.Home != "" {
		home = filepath.Clean(in.Home)
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
	}
	root := findRoot(dir)
	l.src.Root = root
	chain := ancestors(root, dir) // outermost first

	if home != "" {
		l.contextIn(home, "", true)
	}
	for _, d := range chain {
		l.contextIn(d, root, in.ProjectTrusted || !in.GateContextFiles)
	}
	// isHome reports whether the project directory p is $REIN_HOME (rein run in the parent of
	// its own home directory).
	isHome := func(p string) bool {
		if home == "" {
			return false
		}
		a, errA := os.Stat(p)
		b, errB := os.Stat(home)
		return errA == nil && errB == nil && os.SameFile(a, b)
	}

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
			if !exists(p) || isHome(filepath.Join(d, ".rein")) {
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
		for _, sub := range []string{filepath.Join(".rein", "skills"), filepath.Join(".agents", "skills")} {
			p := filepath.Join(d, sub)
			if !exists(p) || isHome(filepath.Dir(p)) {
				continue
			}
			if !in.ProjectTrusted {
				l.src.Untrusted = append(l.src.Untrusted, p)
				continue
			}
			l.skillsIn(p, root, 0)
		}
	}
	if home != "" {
		l.skillsIn(filepath.Join(home, "skills"), "", 0)
	}
	return l.src
}

type loader struct {
	src    *Sources
	seen   []os.FileInfo     // the context files loaded, to load none twice
	names  map[string]string // skill name → SKILL.md path
	capped bool
}

func (l *loader) diag(format string, args ...any) {
	l.src.Diagnostics = append(l.src.Diagnostics, fmt.Sprintf(format, args...))
}

// contextIn loads the first context file present in dir. A non-empty limit is the directory
// the file must resolve inside. Without trusted, the file is only listed as untrusted.
func (l *loader) contextIn(dir, limit string, trusted bool) {
	for _, name := range ContextFileNames {
		p := filepath.Join(dir, name)
		if !exists(p) {
			continue
		}
		if !trusted {
			l.src.Untrusted = append(l.src.Untrusted, p)
			return
		}
		fi, err := os.Stat(p)
		if err == nil {
			for _, prev := range l.seen {
				if os.SameFile(prev, fi) {
					return
				}
			}
		}
		if f, ok := l.read(p, limit); ok {
			if fi != nil {
				l.seen = append(l.seen, fi)
			}
			l.src.Context = append(l.src.Context, *f)
		}
		return
	}
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

// skillsIn indexes the skills below dir: each directory holding a SKILL.md is a skill (its own
// subdirectories are its resources); other directories are searched down to maxSkillDepth.
func (l *loader) skillsIn(dir, limit string, depth int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.diag("%s: skipped: %v", dir, err)
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue
		}
		manifest := filepath.Join(p, "SKILL.md")
		if !exists(manifest) {
			if depth+1 < maxSkillDepth {
				l.skillsIn(p, limit, depth+1)
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
	s, err := ParseSkill(filepath.Base(filepath.Dir(p)), []byte(normalize(data)))
	if err != nil {
		l.diag("%s: skill skipped: %v", p, err)
		return
	}
	s.Path = p
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
