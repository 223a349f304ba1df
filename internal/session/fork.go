package session

import (
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/llm"
)

// ErrBadForkPoint says a fork was asked at an entry that is not a user or assistant message of
// the parent.
var ErrBadForkPoint = errors.New("cannot fork there")

// Fork creates a new session in dir holding the parent's conversation up to entry (the main
// lane's leaf when entry is ""): the same entries with the same ids, and a header naming the
// parent session and entry. The parent is not touched.
func Fork(parent *State, entry, dir string, meta Meta, opts Options) (*Session, error) {
	if entry == "" {
		entry = parent.lane(MainLane).Leaf
	}
	e := parent.Entries[entry]
	if e == nil || e.Message.Role == llm.RoleTool {
		return nil, fmt.Errorf("%w: %q is not a user or assistant entry of session %s", ErrBadForkPoint, entry, parent.Header.ID)
	}
	meta.Parent, meta.ParentEntry = parent.Header.ID, entry
	s, err := Create(dir, meta, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The copied entries are durable together, with the session (one fsync, not one each).
	for _, pe := range parent.pathEntries(entry) {
		if err := s.addEntry(pe.ID, "", pe.Message, entryExtra{compaction: pe.Compaction, forked: true}); err != nil {
			s.l.Close()
			return nil, err
		}
	}
	if err := s.l.Sync(); err != nil {
		s.l.Close()
		return nil, err
	}
	return s, nil
}

// pathEntries is context with the entries themselves.
func (st *State) pathEntries(leaf string) []*Entry {
	var out []*Entry
	for _, e := range st.path(leaf) {
		out = append(out, e)
		if e.Message.Role == llm.RoleAssistant {
			for _, c := range e.Message.ToolCalls() {
				for _, r := range st.results[e.ID] {
					if r.Message.ToolCallID == c.ID {
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}
