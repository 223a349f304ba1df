package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/run/view"
)

// ArtifactInfo is one artifact file of a run as the run ledger recorded it, with the stage and
// attempt that made it.
type ArtifactInfo struct {
	artifact.Reference
	Stage   string `json:"stage"`
	Attempt int    `json:"attempt"`
	// decided is, for a rejection reason, the artifact the gate decided on.
	decided *artifact.Reference
}

// MadeBy says what made the artifact: "stage specification, attempt 2".
func (a ArtifactInfo) MadeBy() string {
	return fmt.Sprintf("stage %s, attempt %d", a.Stage, a.Attempt)
}

// catalog is a run opened read-only and the artifacts its ledger records, in record order.
type catalog struct {
	run  *Run
	list []ArtifactInfo
}

// openCatalog rebuilds run id from its ledger, read-only (no lock, no repair: like Status, it
// writes nothing anywhere), and lists its artifacts.
func openCatalog(env Env, id string) (*catalog, error) {
	r, l, err := openRunMode(env.Home, id, true)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	c := &catalog{run: r}
	seen := map[string]bool{}
	add := func(ref artifact.Reference, stage string, attempt int, decided *artifact.Reference) {
		if !seen[ref.Path] {
			seen[ref.Path] = true
			c.list = append(c.list, ArtifactInfo{Reference: ref, Stage: stage, Attempt: attempt, decided: decided})
		}
	}
	counts := map[string]int{}
	for rec, err := range l.Records() {
		if err != nil {
			return nil, runLedgerError(id, runDir(env.Home, id), err)
		}
		switch rec.Kind {
		case KindStarted:
			for _, a := range r.Started.Artifacts {
				add(a, "start", 1, nil)
			}
		case KindPreflight:
			var b preflightBody
			if json.Unmarshal(rec.Body, &b) == nil {
				counts[StagePreflight]++
				add(b.Artifact, StagePreflight, counts[StagePreflight], nil)
			}
		case KindStageAttempt:
			var a Attempt
			if json.Unmarshal(rec.Body, &a) == nil && a.Artifact != nil {
				add(*a.Artifact, a.Stage, a.Attempt, nil)
			}
		case KindClarified:
			var b clarifiedBody
			if json.Unmarshal(rec.Body, &b) == nil {
				counts[StageClarification]++
				add(b.Artifact, StageClarification, counts[StageClarification], nil)
			}
		case KindCheckResult:
			var cr CheckResult
			if json.Unmarshal(rec.Body, &cr) == nil && cr.Artifact != nil {
				add(*cr.Artifact, cr.Stage, cr.Attempt, nil)
			}
		case KindDeliverySummary:
			var b summaryBody
			if json.Unmarshal(rec.Body, &b) == nil {
				counts[ArtDeliverySummary]++
				add(b.Artifact, StageFullVerification, counts[ArtDeliverySummary], nil)
			}
		case KindGateDecision:
			var d GateDecision
			if json.Unmarshal(rec.Body, &d) == nil {
				counts[d.Gate]++
				if d.Reason != nil {
					art := d.Artifact
					add(*d.Reason, gateFor(d.Gate).stage, counts[d.Gate], &art)
				}
			}
		}
	}
	return c, nil
}

// Artifacts lists run id's artifacts in the order the run ledger recorded them. It writes
// nothing anywhere.
func Artifacts(env Env, id string) ([]ArtifactInfo, error) {
	c, err := openCatalog(env, id)
	if err != nil {
		return nil, err
	}
	return c.list, nil
}

// find returns the index of the artifact name names: an id (its latest version), a file name
// with or without ".md", or a path as recorded.
func (c *catalog) find(name string) (int, error) {
	for i := len(c.list) - 1; i >= 0; i-- {
		if c.list[i].ID == name {
			return i, nil
		}
	}
	for i, a := range c.list {
		base := path.Base(a.Path)
		if a.Path == name || base == name || strings.TrimSuffix(base, ".md") == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: run %s has no artifact %q; its artifacts (by id, with their files): %s", ErrUsage, c.run.ID, name, c.names())
}

// names lists the run's artifact ids, each with its files: "spec (spec.md, spec-2.md)".
func (c *catalog) names() string {
	var ids []string
	files := map[string][]string{}
	for _, a := range c.list {
		if files[a.ID] == nil {
			ids = append(ids, a.ID)
		}
		files[a.ID] = append(files[a.ID], path.Base(a.Path))
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id + " (" + strings.Join(files[id], ", ") + ")"
	}
	return strings.Join(out, ", ")
}

// versions returns the indexes of every artifact with id, in record order.
func (c *catalog) versions(id string) []int {
	var out []int
	for i, a := range c.list {
		if a.ID == id {
			out = append(out, i)
		}
	}
	return out
}

// view reads the artifact at index i for rendering. Its references resolve to the latest
// version of each id recorded before it (what existed when it was made) and to the locked
// guidance digests; it reads and writes nothing else.
func (c *catalog) view(i int) (view.Artifact, error) {
	a := c.list[i]
	data, err := os.ReadFile(resolve(c.run.Project, a.Path))
	if err != nil {
		return view.Artifact{}, fmt.Errorf("%w: artifact %s of run %s: %w", ErrUsage, a.Path, c.run.ID, err)
	}
	refs := map[string]string{}
	for _, b := range c.list[:i] {
		refs[b.ID] = string(b.Digest)
	}
	if lock := c.lock(); lock != nil {
		for _, g := range lock.Guidance {
			refs["guidance:"+g.Path] = g.Digest
		}
	}
	ref := func(id string) (string, bool) { d, ok := refs[id]; return d, ok }
	return view.Artifact{ID: a.ID, Path: a.Path, Digest: string(a.Digest), FileDigest: string(a.FileDigest),
		MadeBy: a.MadeBy(), Inputs: c.inputs(i, data, ref), Data: data, Ref: ref}, nil
}

// lock is the execution lock as recorded, or nil when it cannot be read.
func (c *catalog) lock() *Lock {
	data, err := c.run.readArtifact(ArtLock)
	if err != nil {
		return nil
	}
	var l Lock
	if decodeArtifact(data, &l) != nil {
		return nil
	}
	return &l
}

// inputs is what the artifact at i was made from: for the start artifacts and Preflight what
// makes them, for a rejection reason the artifact decided on, for a stage's artifact the
// inputs the staleness graph recorded (when it is the graph's version) and the pack
// references its contract names.
func (c *catalog) inputs(i int, data []byte, ref func(string) (string, bool)) []view.Input {
	a := c.list[i]
	var out []view.Input
	have := map[string]bool{}
	add := func(id, digest string) {
		if !have[id] {
			have[id] = true
			out = append(out, view.Input{ID: id, Digest: digest})
		}
	}
	byRef := func(id string) { d, _ := ref(id); add(id, d) }
	switch {
	case a.decided != nil:
		add(a.decided.ID, string(a.decided.Digest))
	case a.ID == ArtSnapshot:
		byRef(ArtRequirement)
	case a.ID == ArtLock:
		byRef(ArtSnapshot)
	case a.ID == ArtPreflight:
		byRef(ArtSnapshot)
		byRef(ArtLock)
	}
	for _, n := range c.run.graph().Nodes {
		if n.ID == a.ID && n.Digest == a.Digest {
			for _, in := range n.Inputs {
				add(in.ID, string(in.Digest))
			}
		}
	}
	for _, id := range view.References(data) {
		byRef(id)
	}
	return out
}

// ViewArtifact reads artifact name of run id (see [catalog.find]) for view.Render. It writes
// nothing anywhere.
func ViewArtifact(env Env, id, name string) (view.Artifact, error) {
	c, err := openCatalog(env, id)
	if err != nil {
		return view.Artifact{}, err
	}
	i, err := c.find(name)
	if err != nil {
		return view.Artifact{}, err
	}
	return c.view(i)
}

// DiffPair is what `rein run diff` compares: two versions of one artifact and why that base.
type DiffPair struct {
	Old, New view.Artifact
	Base     string // "the artifact the spec gate last rejected", "the previous attempt"
}

// DiffArtifacts picks the two versions of artifact name to compare. With attempt > 0, name is
// an id and the new side is the version its stage's attempt made; otherwise the version name
// names (an id: its latest). The base is, for the latest version of a gate's artifact, the
// latest other version the gate decided on (what a person last approved or rejected); else the
// previous version. It writes nothing anywhere.
func DiffArtifacts(env Env, id, name string, attempt int) (DiffPair, error) {
	var p DiffPair
	c, err := openCatalog(env, id)
	if err != nil {
		return p, err
	}
	i, err := c.find(name)
	if err != nil {
		return p, err
	}
	vs := c.versions(c.list[i].ID)
	if attempt > 0 {
		if c.list[i].ID != name {
			return p, fmt.Errorf("%w: --attempt picks a version of an artifact id; %q is a file: pass its id (%s) instead", ErrUsage, name, c.list[i].ID)
		}
		i = -1
		for _, k := range vs {
			if c.list[k].Attempt == attempt {
				i = k
			}
		}
		if i < 0 {
			return p, fmt.Errorf("%w: artifact %s of run %s has no attempt %d; its versions: %s", ErrUsage, name, id, attempt, c.describe(vs))
		}
	}
	base := -1
	pos := indexOf(vs, i)
	if pos == len(vs)-1 {
		if b, what := c.decidedVersion(c.list[i]); b >= 0 && b != i {
			base, p.Base = b, what
		}
	}
	if base < 0 && pos > 0 {
		base, p.Base = vs[pos-1], "the previous version"
	}
	if base < 0 {
		return p, fmt.Errorf("%w: artifact %s of run %s has only %s: nothing to compare it with", ErrUsage, c.list[i].ID, id, c.describe(vs[:pos+1]))
	}
	if p.Old, err = c.view(base); err != nil {
		return p, err
	}
	p.New, err = c.view(i)
	return p, err
}

// decidedVersion returns the index of the latest other version of a's id that its gate
// decided on (approved or rejected), with what that decision was; -1 when a is no gate's
// artifact or its gate decided on no other version.
func (c *catalog) decidedVersion(a ArtifactInfo) (int, string) {
	for _, gd := range gates {
		gate, g := gd.name, gd.def
		if a.Stage != g.model {
			continue
		}
		ds := c.run.Gates[gate]
		for j := len(ds) - 1; j >= 0; j-- {
			if ds[j].Artifact.Path == a.Path {
				continue
			}
			for k, b := range c.list {
				if b.Path == ds[j].Artifact.Path {
					return k, fmt.Sprintf("the version the %s gate %s", gate, ds[j].Decision)
				}
			}
		}
	}
	return -1, ""
}

// describe lists versions: "attempt 1 (spec.md), attempt 2 (spec-2.md)".
func (c *catalog) describe(vs []int) string {
	out := make([]string, len(vs))
	for i, k := range vs {
		out[i] = "attempt " + strconv.Itoa(c.list[k].Attempt) + " (" + path.Base(c.list[k].Path) + ")"
	}
	if len(out) == 0 {
		return "no version"
	}
	return strings.Join(out, ", ")
}

func indexOf(xs []int, x int) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// GateArtifact returns the artifact awaiting gate's decision in run id, read for a person to
// review before approving it. It checks what openGate checks without reconciling, and writes
// nothing anywhere; ApproveGate checks everything again when the decision is recorded.
func GateArtifact(env Env, id, gate string) (view.Artifact, error) {
	g, ok := gateOf(gate)
	if !ok {
		return view.Artifact{}, fmt.Errorf("%w: gate %q: the gates are spec and ticket-plan", ErrUsage, gate)
	}
	c, err := openCatalog(env, id)
	if err != nil {
		return view.Artifact{}, err
	}
	r := c.run
	if r.Aborted {
		return view.Artifact{}, fmt.Errorf("%w: run %s was aborted", ErrFinished, id)
	}
	art, ok := r.accepted(g.model)
	if r.Stage != g.stage || !ok {
		return view.Artifact{}, fmt.Errorf("%w: run %s is at stage %s; the %s gate is not open", ErrNotRunnable, id, r.Stage, gate)
	}
	i, err := c.find(path.Base(art.Path))
	if err != nil {
		return view.Artifact{}, err
	}
	v, err := c.view(i)
	if err != nil {
		return v, err
	}
	if d := artifact.Sum(v.Data); d != art.FileDigest {
		return v, fmt.Errorf("%w: the %s awaiting the gate, %s, has file digest %s; the run ledger recorded %s: restore it before deciding (%s)",
			ErrBlocked, g.what, art.Path, d, art.FileDigest, BlockArtifactTampered)
	}
	return v, nil
}
