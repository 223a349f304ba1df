package telemetry

import (
	"fmt"
	"sort"
	"time"

	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/session"
)

// Dimension is what costs are grouped by.
type Dimension string

const (
	ByModel   Dimension = "model"   // provider/model of the answering model
	ByDay     Dimension = "day"     // the calendar day of the answer (YYYY-MM-DD)
	ByProject Dimension = "project" // the working directory the session ran in
)

// Dimensions lists the dimensions in the order they are documented.
var Dimensions = []Dimension{ByModel, ByDay, ByProject}

// Unknown is the key of a group whose value was not recorded.
const Unknown = "(unknown)"

// Row totals one group.
type Row struct {
	Key string `json:"key"`
	// Sessions counts the sessions with at least one request in the group.
	Sessions int `json:"sessions"`
	// Requests counts recorded model answers, failed attempts included.
	Requests int `json:"requests"`
	// Input excludes cached tokens; CacheRead and CacheWrite count them (as llm.Usage does).
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cacheRead"`
	CacheWrite int     `json:"cacheWrite"`
	Cost       float64 `json:"cost"`

	sessions map[string]bool
}

func (r *Row) add(sessionID string, u llm.Usage) {
	if r.sessions == nil {
		r.sessions = map[string]bool{}
	}
	if !r.sessions[sessionID] {
		r.sessions[sessionID] = true
		r.Sessions++
	}
	r.Requests++
	r.Input += u.Input
	r.Output += u.Output
	r.CacheRead += u.CacheRead
	r.CacheWrite += u.CacheWrite
	r.Cost += u.Cost.Total
}

// Costs totals the usage recorded in session ledgers. The zero value is not usable; call
// [NewCosts].
type Costs struct {
	loc    *time.Location
	groups map[Dimension]map[string]*Row
	total  Row
}

// NewCosts returns empty totals whose days are calendar days in loc (nil: UTC).
func NewCosts(loc *time.Location) *Costs {
	if loc == nil {
		loc = time.UTC
	}
	c := &Costs{loc: loc, groups: map[Dimension]map[string]*Row{}}
	for _, d := range Dimensions {
		c.groups[d] = map[string]*Row{}
	}
	return c
}

// Add counts the session's model answers: every assistant entry recorded by one of its model
// calls. Entries without an intent are copies a fork took from its parent session, counted
// with the parent.
func (c *Costs) Add(st *session.State) {
	id := st.Header.ID
	project := st.Header.Bindings[session.BindCwd]
	if project == "" {
		project = Unknown
	}
	for _, e := range st.Order {
		m := &e.Message
		if m.Role != llm.RoleAssistant || e.Intent == "" {
			continue
		}
		var u llm.Usage
		if m.Usage != nil {
			u = *m.Usage
		}
		at := e.Time
		if m.Time > 0 {
			at = time.UnixMilli(m.Time)
		}
		day := Unknown
		if !at.IsZero() {
			day = at.In(c.loc).Format(time.DateOnly)
		}
		for d, key := range map[Dimension]string{ByModel: modelKey(m), ByDay: day, ByProject: project} {
			r := c.groups[d][key]
			if r == nil {
				r = &Row{Key: key}
				c.groups[d][key] = r
			}
			r.add(id, u)
		}
		c.total.add(id, u)
	}
}

func modelKey(m *llm.Message) string {
	switch {
	case m.Model == "":
		return Unknown
	case m.Provider == "":
		return m.Model
	}
	return m.Provider + "/" + m.Model
}

// Rows returns the groups of d: days in calendar order, models and projects by cost, highest
// first (then by key).
func (c *Costs) Rows(d Dimension) ([]Row, error) {
	g, ok := c.groups[d]
	if !ok {
		return nil, fmt.Errorf("unknown dimension %q: want model, day or project", d)
	}
	out := make([]Row, 0, len(g))
	for _, r := range g {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if d != ByDay && out[i].Cost != out[j].Cost {
			return out[i].Cost > out[j].Cost
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// Total returns the totals over every group.
func (c *Costs) Total() Row {
	t := c.total
	t.Key = "total"
	return t
}
