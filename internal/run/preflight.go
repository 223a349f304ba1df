package run

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/gitx"
)

// Check is one Preflight check: ok, failed or unknown.
type Check struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Gap is an evidence gap: something the run does not know. Required gaps must be resolved by
// Clarification or block the run; optional ones are listed.
type Gap struct {
	ID       string `json:"id"`
	Source   string `json:"source"` // snapshot, profile or preflight
	Required bool   `json:"required"`
	Detail   string `json:"detail"`
}

// PreflightResult is Preflight's outcome: every check, the evidence gaps, and the blockers.
type PreflightResult struct {
	Checks   []Check   `json:"checks"`
	Gaps     []Gap     `json:"gaps"`
	Blockers []Blocker `json:"blockers,omitempty"`
}

// Preflight is the deterministic first stage: guidance files present with their locked digests,
// verification commands resolvable, the project a git repository whose tracked files are clean
// (.rein/ aside) and the delivery branch creatable. What it cannot establish becomes a gap.
func Preflight(project string, lock Lock, snap Snapshot) PreflightResult {
	var r PreflightResult
	check := func(id, status, detail string) { r.Checks = append(r.Checks, Check{id, status, detail}) }
	gap := func(id, src string, req bool, detail string) { r.Gaps = append(r.Gaps, Gap{id, src, req, detail}) }
	for _, g := range lock.Guidance {
		d, err := FileDigest(filepath.Join(project, filepath.FromSlash(g.Path)))
		switch {
		case err != nil:
			check("guidance:"+g.Path, "failed", "missing or unreadable")
			r.Blockers = append(r.Blockers, guidanceBlocker(StagePreflight, g, "is missing or unreadable"))
		case string(d) != g.Digest:
			check("guidance:"+g.Path, "failed", fmt.Sprintf("digest %s, profile has %s", d, g.Digest))
			r.Blockers = append(r.Blockers, guidanceBlocker(StagePreflight, g, fmt.Sprintf("has digest %s", d)))
		default:
			check("guidance:"+g.Path, "ok", g.Digest)
		}
	}
	if len(lock.Guidance) == 0 {
		gap("no-guidance", "profile", false, "the profile names no guidance files")
	}
	required := 0
	for _, id := range slices.Sorted(maps.Keys(lock.Verification)) {
		v := lock.Verification[id]
		if v.Required {
			required++
		}
		if err := lookCommand(project, v.Argv[0]); err != nil {
			check("command:"+id, "failed", fmt.Sprintf("%s does not resolve: %v", v.Argv[0], err))
			if v.Required {
				r.Blockers = append(r.Blockers, Blocker{Code: BlockPreflight, Stage: StagePreflight,
					Detail:   fmt.Sprintf("required verification command %s (%s) does not resolve", id, v.Argv[0]),
					Recovery: []string{"install " + v.Argv[0] + " and start a new run", "fix the command in the profile, approve it, and start a new run"}})
			} else {
				gap("command:"+id, "preflight", false, "optional verification command "+id+" does not resolve")
			}
			continue
		}
		check("command:"+id, "ok", v.Argv[0]+" resolves")
	}
	if required == 0 {
		gap("no-required-verification", "profile", true, "the profile names no required verification command: nothing can prove a ticket works")
	}
	if snap.Summary == "" {
		gap("requirement-summary", "snapshot", true, "the requirement has no heading or first line to summarize it")
	}
	ctx, repo := context.Background(), gitx.Runner{Dir: project}
	if !repo.IsRepo(ctx) {
		check("git", "unknown", "not a git repository")
		gap("git-repository", "preflight", true, "the project is not a git repository: no delivery branch or ticket worktrees can be made")
		return r
	}
	if out, err := repo.Output(ctx, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude).rein"); err != nil {
		check("git-clean", "unknown", err.Error())
		gap("git-clean", "preflight", false, "could not tell whether the work tree is clean")
	} else if out != "" {
		check("git-clean", "failed", "tracked files have uncommitted changes")
		gap("git-clean", "preflight", true, "tracked files have uncommitted changes; the delivery branch would not start from a known commit")
	} else {
		check("git-clean", "ok", "tracked files are clean")
	}
	if _, err := repo.Head(ctx); err != nil {
		check("git-head", "unknown", "the repository has no commit")
		gap("git-head", "preflight", true, "the repository has no commit to branch from")
	}
	if _, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+snap.Branch); err == nil {
		check("branch", "unknown", "branch "+snap.Branch+" exists")
		gap("branch-exists", "preflight", true, "the delivery branch "+snap.Branch+" already exists; say whether the run may build on it")
	} else {
		check("branch", "ok", snap.Branch+" can be created")
	}
	return r
}

func guidanceBlocker(stage string, g Guidance, what string) Blocker {
	return Blocker{Code: BlockGuidanceDrift, Stage: stage, Input: "guidance:" + g.Path,
		Detail: fmt.Sprintf("guidance file %s %s; the run is locked to %s", g.Path, what, g.Digest),
		Recovery: []string{"restore " + g.Path + " to the locked content (digest " + g.Digest + ")",
			"update the digest in the profile, approve it, abort this run and start a new one"}}
}

var _ = os.Stat
