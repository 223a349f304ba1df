package artifact

import (
	"cmp"
	"fmt"
	"slices"
)

// Graph records how artifacts were made and what was approved: for each artifact, the digest it
// had and the digests of the inputs it was made from; for each approval, the digest approved.
// Inputs may name ids that are not nodes (a requirement snapshot, a profile): their staleness is
// only whether their digest changed.
type Graph struct {
	Nodes     []Node
	Approvals []Approval
}

// Node is one artifact as recorded when it was made.
type Node struct {
	ID     string
	Digest Digest  // the artifact's digest when it was recorded
	Inputs []Input // what it was made from, each with the digest that was used
}

// Input is one input of a Node.
type Input struct {
	ID     string
	Digest Digest
}

// Approval is a human approval bound to the digest of what was approved.
type Approval struct {
	ID       string // the approval's own id (a gate, a decision)
	Artifact string // the id approved: a node or any id with a current digest
	Digest   Digest // the digest approved
}

// Report is the outcome of Graph.Check. Every list is sorted by id (approvals by id, then
// artifact, then digest), so equal inputs give equal reports.
type Report struct {
	Changed   []Change        // nodes whose current digest differs from the recorded one
	Stale     []Staleness     // nodes downstream of a change
	Approvals []ApprovalState // every approval, with its status
}

// Change is a node whose current digest differs from its recorded one.
type Change struct {
	ID       string
	Recorded Digest
	Current  Digest // "" when there is no current digest (the artifact is gone)
}

// Staleness says why a node is stale.
type Staleness struct {
	ID string
	// Inputs are the node's direct inputs that are the reason: their current digest differs
	// from the one the node was made from, or they are stale themselves. Sorted.
	Inputs []string
	// Causes are the ids whose digest change started it: inputs, here or anywhere upstream,
	// whose current digest differs from the digest that was used. Sorted.
	Causes []string
}

// ApprovalStatus says whether an approval still holds.
type ApprovalStatus string

const (
	// ApprovalValid: the approved id still has the approved digest and is not stale.
	ApprovalValid ApprovalStatus = "valid"
	// ApprovalChanged: the approved id's current digest differs from the approved one (or it
	// has none). This wins over ApprovalStale.
	ApprovalChanged ApprovalStatus = "changed"
	// ApprovalStale: the approved bytes are unchanged but something they were made from
	// changed, so the approved artifact is stale.
	ApprovalStale ApprovalStatus = "stale"
)

// ApprovalState is one approval checked against the current digests.
type ApprovalState struct {
	Approval
	Current Digest // "" when the approved id has no current digest
	Status  ApprovalStatus
}

// IsStale reports whether the report marks id stale.
func (r Report) IsStale(id string) bool {
	_, ok := slices.BinarySearchFunc(r.Stale, id, func(s Staleness, id string) int { return cmp.Compare(s.ID, id) })
	return ok
}

// Invalid returns the approvals that no longer hold (status other than ApprovalValid), in
// report order.
func (r Report) Invalid() []ApprovalState {
	var out []ApprovalState
	for _, a := range r.Approvals {
		if a.Status != ApprovalValid {
			out = append(out, a)
		}
	}
	return out
}

// Check compares the graph with the current digests of the artifacts (and of external inputs).
// An id missing from current has no current digest: it counts as changed (deleted), never as
// unchanged. A node is stale when one of its inputs has a current digest different from the one
// it was made from, or when one of its inputs is a stale node — so a change marks everything
// downstream stale, transitively, through chains and diamonds alike. A node whose own digest
// changed is reported in Changed; it is stale only for the reasons above. The graph must be
// valid: unique non-empty node ids, valid digests, no duplicate input in a node and no cycle;
// otherwise the error wraps ErrInvalidGraph (or ErrInvalidDigest for a bad current digest).
func (g Graph) Check(current map[string]Digest) (Report, error) {
	nodes, err := g.validate()
	if err != nil {
		return Report{}, err
	}
	for id, d := range current {
		if !d.Valid() {
			return Report{}, fmt.Errorf("%w: current digest of %q: %q", ErrInvalidDigest, id, string(d))
		}
	}

	type result struct {
		stale          bool
		inputs, causes []string
	}
	results := make(map[string]*result, len(nodes))
	const (
		visiting = iota + 1
		done
	)
	color := make(map[string]int, len(nodes))
	var visit func(n *Node) (*result, error)
	visit = func(n *Node) (*result, error) {
		switch color[n.ID] {
		case done:
			return results[n.ID], nil
		case visiting:
			return nil, fmt.Errorf("%w: cycle through %q", ErrInvalidGraph, n.ID)
		}
		color[n.ID] = visiting
		inputs := map[string]bool{}
		causes := map[string]bool{}
		for _, in := range n.Inputs {
			if cur, ok := current[in.ID]; !ok || cur != in.Digest {
				inputs[in.ID] = true
				causes[in.ID] = true
			}
			up, ok := nodes[in.ID]
			if !ok {
				continue
			}
			r, err := visit(up)
			if err != nil {
				return nil, err
			}
			if r.stale {
				inputs[in.ID] = true
				for _, c := range r.causes {
					causes[c] = true
				}
			}
		}
		r := &result{stale: len(inputs) > 0, inputs: sortedKeys(inputs), causes: sortedKeys(causes)}
		results[n.ID] = r
		color[n.ID] = done
		return r, nil
	}

	var rep Report
	for i := range g.Nodes {
		n := &g.Nodes[i]
		r, err := visit(n)
		if err != nil {
			return Report{}, err
		}
		if r.stale {
			rep.Stale = append(rep.Stale, Staleness{ID: n.ID, Inputs: r.inputs, Causes: r.causes})
		}
		if cur := current[n.ID]; cur != n.Digest {
			rep.Changed = append(rep.Changed, Change{ID: n.ID, Recorded: n.Digest, Current: cur})
		}
	}
	for _, a := range g.Approvals {
		st := ApprovalState{Approval: a, Current: current[a.Artifact], Status: ApprovalValid}
		switch r := results[a.Artifact]; {
		case st.Current != a.Digest:
			st.Status = ApprovalChanged
		case r != nil && r.stale:
			st.Status = ApprovalStale
		}
		rep.Approvals = append(rep.Approvals, st)
	}
	slices.SortFunc(rep.Changed, func(a, b Change) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(rep.Stale, func(a, b Staleness) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(rep.Approvals, func(a, b ApprovalState) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Artifact, b.Artifact), cmp.Compare(a.Digest, b.Digest))
	})
	return rep, nil
}

// validate checks the graph's form and indexes its nodes by id.
func (g Graph) validate() (map[string]*Node, error) {
	nodes := make(map[string]*Node, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		switch {
		case n.ID == "":
			return nil, fmt.Errorf("%w: node %d has an empty id", ErrInvalidGraph, i)
		case nodes[n.ID] != nil:
			return nil, fmt.Errorf("%w: node id %q appears twice", ErrInvalidGraph, n.ID)
		case !n.Digest.Valid():
			return nil, fmt.Errorf("%w: node %q: %w: %q", ErrInvalidGraph, n.ID, ErrInvalidDigest, string(n.Digest))
		}
		seen := map[string]bool{}
		for _, in := range n.Inputs {
			switch {
			case in.ID == "":
				return nil, fmt.Errorf("%w: node %q has an input with an empty id", ErrInvalidGraph, n.ID)
			case in.ID == n.ID:
				return nil, fmt.Errorf("%w: node %q is its own input", ErrInvalidGraph, n.ID)
			case seen[in.ID]:
				return nil, fmt.Errorf("%w: node %q lists input %q twice", ErrInvalidGraph, n.ID, in.ID)
			case !in.Digest.Valid():
				return nil, fmt.Errorf("%w: node %q, input %q: %w: %q", ErrInvalidGraph, n.ID, in.ID, ErrInvalidDigest, string(in.Digest))
			}
			seen[in.ID] = true
		}
		nodes[n.ID] = n
	}
	for i, a := range g.Approvals {
		switch {
		case a.Artifact == "":
			return nil, fmt.Errorf("%w: approval %d (%q) names no artifact", ErrInvalidGraph, i, a.ID)
		case !a.Digest.Valid():
			return nil, fmt.Errorf("%w: approval %d (%q): %w: %q", ErrInvalidGraph, i, a.ID, ErrInvalidDigest, string(a.Digest))
		}
	}
	return nodes, nil
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
