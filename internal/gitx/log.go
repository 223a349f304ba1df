package gitx

import (
	"context"
	"fmt"
	"strings"
)

// Commit is one commit as [Runner.Log] reads it.
type Commit struct {
	ID      string
	Parents []string
	Author  string // "name <email>"
	Message string // the raw message, trailers included
}

// Log returns the commits reachable from head and from none of exclude, oldest first (git's
// topological order, reversed); firstParent follows only first parents (a branch's own line
// of merges). Every id must be a full hexadecimal object id, so none can be read as an
// option or a range.
func (r Runner) Log(ctx context.Context, firstParent bool, head string, exclude ...string) ([]Commit, error) {
	args := []string{"log", "-z", "--topo-order", "--reverse", "--no-color", "--format=%H%x00%P%x00%an <%ae>%x00%B"}
	if firstParent {
		args = append(args, "--first-parent")
	}
	for _, id := range append([]string{head}, exclude...) {
		if !isObjectID(id) {
			return nil, fmt.Errorf("gitx: log: %q is not a full object id", id)
		}
	}
	args = append(args, "--end-of-options", head)
	for _, x := range exclude {
		args = append(args, "^"+x)
	}
	args = append(args, "--")
	out, err := r.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	fields := SplitNUL(out)
	if len(fields)%4 != 0 {
		return nil, fmt.Errorf("gitx: log printed %d fields, not 4 a commit", len(fields))
	}
	var commits []Commit
	for i := 0; i < len(fields); i += 4 {
		c := Commit{ID: strings.TrimPrefix(fields[i], "\n"), Author: fields[i+2], Message: fields[i+3]}
		if p := strings.TrimSpace(fields[i+1]); p != "" {
			c.Parents = strings.Fields(p)
		}
		commits = append(commits, c)
	}
	return commits, nil
}

// Trailer returns the value of the last "key: value" trailer line of a commit message ("" when
// there is none).
func (c Commit) Trailer(key string) string {
	v := ""
	for line := range strings.SplitSeq(c.Message, "\n") {
		if rest, ok := strings.CutPrefix(line, key+": "); ok {
			v = strings.TrimSpace(rest)
		}
	}
	return v
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
