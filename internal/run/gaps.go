package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/run/contract"
)

// requiredGapIDs returns the ids of the required evidence gaps Preflight recorded last. A
// required gap stays open until Clarification answers it (an answer keyed by the gap's id) or
// new evidence (a later Preflight record without it) removes it.
func requiredGapIDs(gaps []Gap) []string {
	var out []string
	for _, g := range gaps {
		if g.Required && !slices.Contains(out, g.ID) {
			out = append(out, g.ID)
		}
	}
	return out
}

// openRequired returns the ids Clarification must answer before Specification may start: the
// research's required unknowns, then the required evidence gaps (each id once).
func (r *Run) openRequired(res *contract.Research) []string {
	var ids []string
	for _, u := range requiredUnknowns(res) {
		ids = append(ids, u.ID)
	}
	for _, id := range requiredGapIDs(r.Gaps) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// gapsSection renders the evidence gaps for a stage request.
func gapsSection(gaps []Gap) string {
	var b strings.Builder
	b.WriteString("## Evidence gaps\n\n")
	if len(gaps) == 0 {
		b.WriteString("none recorded by Preflight\n")
	}
	for _, g := range gaps {
		kind := "optional"
		if g.Required {
			kind = "required"
		}
		fmt.Fprintf(&b, "- %s (%s, from %s): %s\n", g.ID, kind, g.Source, g.Detail)
	}
	return b.String()
}
