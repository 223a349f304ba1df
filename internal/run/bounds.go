package run

import (
	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/artifact"
)

// reinDir is the project's rein directory: profile, approval, runs.
const reinDir = ".rein"

// stageBound is a model stage's input boundary: the role's standard tools its agent gets (nil:
// the whole read-only surface) and what those tools may read.
type stageBound struct {
	tools []string
	reads agentspec.ReadScope
}

// repositoryBound is Research's boundary: the read-only tools over the repository, never
// .rein/ (the profile, its approval, the runs' artifacts: what Research needs of them is in
// its pack). $REIN_HOME is unreadable to every agent (the permission rules' read protection).
func repositoryBound(artifact.Pack) stageBound {
	return stageBound{reads: agentspec.ReadScope{Name: "the research stage's inputs (the repository without .rein/)", Deny: []string{reinDir}}}
}

// packBound is the boundary of a stage that works from its pack alone (Specification, Ticket
// Planning): the read tool only, confined to the pack's files, which the request carries
// anyway.
func packBound(stage string) func(artifact.Pack) stageBound {
	return func(p artifact.Pack) stageBound {
		only := make([]string, 0, len(p.References))
		for _, ref := range p.References {
			only = append(only, ref.Path)
		}
		return stageBound{tools: []string{"read"}, reads: agentspec.ReadScope{Name: "the " + stage + " stage's pack", Only: only}}
	}
}
