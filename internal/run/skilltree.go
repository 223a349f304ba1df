package run

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/ledger"
)

// Limits on the pinned skill trees a stage request carries. A run whose skills exceed them does
// not start (and a request that would exceed them is refused with [BlockSkillTooLarge]); rein
// never truncates a skill.
const (
	// MaxSkillFiles bounds the files of one skill tree (text and binary).
	MaxSkillFiles = 64
	// MaxSkillTextBytes bounds one skill's text: the sum of the sizes of its text files.
	MaxSkillTextBytes = 32 << 10
	// MaxStageSkillBytes bounds the skill text of one stage request: the sum over every skill
	// mapped to the stage.
	MaxStageSkillBytes = 64 << 10
)

// BlockSkillTooLarge: the skills mapped to a stage exceed [MaxSkillFiles], [MaxSkillTextBytes]
// or [MaxStageSkillBytes] (reported, not recorded; possible only on a harness whose limits
// differ from the one that started the run).
const BlockSkillTooLarge = "run_skill_too_large"

// skillFile is one file of a skill tree as read for the tree digest.
type skillFile struct {
	Path   string // slash-separated, relative to the skill directory
	Size   int
	Digest artifact.Digest // sha256 of the bytes
	Binary bool            // not UTF-8 text, or holds a NUL byte: named, never sent
	Text   []byte          // the bytes of a text file (nil once the tree is over MaxSkillTextBytes)
}

// skillTree is a skill directory read once: its files in walk order, its tree digest computed
// from the very bytes read, and its text size.
type skillTree struct {
	Files     []skillFile
	Digest    artifact.Digest
	TextBytes int
}

// readSkillTree reads every file under dir in lexical walk order and computes the tree digest
// (see the package doc: each file's slash path, its length and its bytes fed in order) from the
// bytes it keeps, so that what a request carries is what the digest covers. Anything but
// directories and regular files (a symlink, a device) is an error.
func readSkillTree(dir string) (skillTree, error) {
	var t skillTree
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f := skillFile{Path: filepath.ToSlash(rel), Size: len(data), Digest: artifact.Sum(data),
			Binary: bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)}
		fmt.Fprintf(h, "%s\x00%d\x00", f.Path, len(data))
		h.Write(data)
		if !f.Binary {
			t.TextBytes += len(data)
			if t.TextBytes <= MaxSkillTextBytes {
				f.Text = data
			}
		}
		t.Files = append(t.Files, f)
		return nil
	})
	if err != nil {
		return skillTree{}, err
	}
	t.Digest = artifact.Digest(artifact.DigestPrefix + fmt.Sprintf("%x", h.Sum(nil)))
	return t, nil
}

// overLimit says how the tree of skill name exceeds the per-skill limits, or "".
func (t skillTree) overLimit(name string) string {
	switch {
	case len(t.Files) > MaxSkillFiles:
		return fmt.Sprintf("pinned skill %s has %d files, more than the %d a skill may have", name, len(t.Files), MaxSkillFiles)
	case t.TextBytes > MaxSkillTextBytes:
		return fmt.Sprintf("pinned skill %s has %d bytes of text, more than the %d a skill may send", name, t.TextBytes, MaxSkillTextBytes)
	}
	return ""
}

// skillStages are the stage ids a skill may be mapped to: the workflow's model stages.
func skillStages() []string {
	var ids []string
	for _, s := range DeliveryWorkflow().Stages {
		if s.Kind == KindModel {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// checkSkillLimits refuses skills that a stage request could not carry whole: a tree over the
// per-skill limits, or a stage whose mapped skills together exceed [MaxStageSkillBytes].
func checkSkillLimits(skills []Skill, trees []skillTree) error {
	perStage := map[string]int{}
	for i, s := range skills {
		if msg := trees[i].overLimit(s.Name); msg != "" {
			return fmt.Errorf("%s: trim the skill or split it, then approve the profile again", msg)
		}
		for _, st := range s.Stages {
			perStage[st] += trees[i].TextBytes
		}
	}
	for _, st := range skillStages() {
		if perStage[st] > MaxStageSkillBytes {
			var names []string
			for _, s := range skills {
				if slices.Contains(s.Stages, st) {
					names = append(names, s.Name)
				}
			}
			return fmt.Errorf("the skills mapped to stage %s (%s) have %d bytes of text, more than the %d one stage request may carry: map fewer skills to %s in %s, then approve the profile again",
				st, strings.Join(names, ", "), perStage[st], MaxStageSkillBytes, st, ProfilePath)
		}
	}
	return nil
}

// stageSkills is the "Pinned skills" section of stage's request: every locked skill mapped to
// the stage (a skill with no stages goes to none), each tree read now and checked against its
// locked tree digest. A tree that differs is drift: reconciliation records run_skill_drift and
// the request is never built. "" when no skill is mapped to the stage. It reconciles every
// locked input, writing the run's state: never while tickets run (see ticketSkills).
func (r *Run) stageSkills(env Env, l *ledger.Ledger, stage string) (string, error) {
	text, drift, err := r.readStageSkills(stage)
	if drift != nil {
		if rerr := r.reconcileAndRecord(env, l); rerr != nil {
			return "", rerr
		}
		return "", fmt.Errorf("%w: pinned skill %s changed while the %s request was built (%s): run `rein run next %s` again", ErrBlocked, drift.Name, stage, BlockSkillDrift, r.ID)
	}
	return text, err
}

// ticketSkills is stageSkills for a ticket's writer request, built while the other tickets of
// its batch run: it reads the locked skills (the lock is not written while a batch runs: the
// run's inputs are reconciled before each batch fans out) and the skill trees, and a drifted
// tree is recorded as the very blocker reconciliation finds for it (recordBlocker, under the
// ticket lock). It writes nothing else that another ticket reads.
func (r *Run) ticketSkills(env Env, l *ledger.Ledger) (string, error) {
	text, drift, err := r.readStageSkills(StageTicketExecution)
	if drift != nil {
		return "", r.recordBlocker(l, r.withRelock(env, []Blocker{r.skillDriftBlocker(drift.LockedSkill, drift.digest, drift.err)})[0])
	}
	return text, err
}

// skillDrift is a locked skill whose tree, read now, is not the locked one: its digest, or
// the error reading it.
type skillDrift struct {
	LockedSkill
	digest artifact.Digest
	err    error
}

// readStageSkills reads the trees of the locked skills mapped to stage and renders the
// "Pinned skills" section; the first tree that differs from the lock is returned as drift
// (and nothing is rendered). It reads r.Lock and writes nothing.
func (r *Run) readStageSkills(stage string) (string, *skillDrift, error) {
	var skills []Skill
	var trees []skillTree
	for _, s := range r.Lock.Skills {
		if !slices.Contains(s.Stages, stage) {
			continue
		}
		t, err := readSkillTree(filepath.Join(r.Project, filepath.FromSlash(s.Path)))
		if err != nil || t.Digest != s.TreeDigest {
			return "", &skillDrift{LockedSkill: s, digest: t.Digest, err: err}, nil
		}
		skills, trees = append(skills, s.Skill), append(trees, t)
	}
	if len(skills) == 0 {
		return "", nil, nil
	}
	if err := checkSkillLimits(skills, trees); err != nil {
		return "", nil, &BlockedError{RunID: r.ID, Blockers: []Blocker{{Code: BlockSkillTooLarge, Stage: stage, Detail: err.Error(),
			Recovery: []string{"continue with the rein binary that started the run", "abort the run (rein run abort " + r.ID + ") and start a new one with fewer or smaller skills"}}}}
	}
	var b strings.Builder
	b.WriteString(skillsPreamble)
	for i, s := range skills {
		writeSkill(&b, s, trees[i])
	}
	return b.String(), nil, nil
}

// skillsPreamble opens the "Pinned skills" section of a stage request.
const skillsPreamble = `
## Pinned skills

Follow these skills. Each is a pinned skill tree exactly as the execution lock holds it, not
modified by rein: every file of the tree in order, with its size and sha256 digest, then its
text verbatim between fences (rein adds a line break before the closing fence when a file does
not end with one); a binary file is named with its size and digest, its bytes are not sent.
Each tree was read for this request and its tree digest checked equal to the locked one. The
skills are wrapped by this request's contract and rules: where a skill disagrees with them,
the contract and rules win.
`

// writeSkill renders one skill of the "Pinned skills" section.
func writeSkill(b *strings.Builder, s Skill, t skillTree) {
	fmt.Fprintf(b, "\n### Skill %s@%s\n\npath: %s\ntree digest: %s (locked)\nfiles: %d, %d bytes of text\n",
		s.Name, plain(s.Revision), plain(s.Path), t.Digest, len(t.Files), t.TextBytes)
	for _, f := range t.Files {
		fmt.Fprintf(b, "\n#### %s\n\n%d bytes, %s", plain(f.Path), f.Size, f.Digest)
		if f.Binary {
			b.WriteString("; binary: not sent\n")
			continue
		}
		fence := strings.Repeat("`", max(3, longestRun(f.Text, '`')+1))
		fmt.Fprintf(b, "\n\n%s\n%s", fence, f.Text)
		if len(f.Text) > 0 && f.Text[len(f.Text)-1] != '\n' {
			b.WriteString("\n")
		}
		b.WriteString(fence + "\n")
	}
}

// plain returns s as is when it is one line of printable characters without backticks, else
// Go-quoted, so that a name cannot break the section's structure.
func plain(s string) string {
	if q := strconv.Quote(s); q == `"`+s+`"` && !strings.ContainsAny(s, "`") {
		return s
	}
	return strconv.Quote(s)
}

// longestRun is the length of the longest run of c in data.
func longestRun(data []byte, c byte) int {
	best, n := 0, 0
	for _, x := range data {
		if x == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
