package proc

import (
	"crypto/rand"
	"encoding/hex"
	"github.com/reinhq/rein/internal/lazy"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// EnvTag is the environment variable that marks every process [Run] starts (and, by
// inheritance, what those start): a ":"-separated list of tags, one per rein process the
// process descends from. A tag is "<id>.<n>" (run n of the rein process with that id), or
// "<id>.keep" for a run whose processes may outlive it ([Spec.LeaveRunning]).
const EnvTag = "REIN_PROC"

// keepSuffix ends the tag of a run whose processes are left running.
const keepSuffix = "keep"

// selfID names this rein process in tags and in its [Journal]: random, so a tag found in a
// process's environment cannot be confused with another rein's. Made on first use: a rein
// that starts no process needs none, and the first random read costs at start-up.
func selfID() string { return selfIDOnce.Get(newSelfID) }

var selfIDOnce lazy.Value[string]

func newSelfID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

var runSeq atomic.Uint64

// newTag returns the tag of a new run.
func newTag(leaveRunning bool) string {
	if leaveRunning {
		return selfID() + "." + keepSuffix
	}
	return selfID() + "." + strconv.FormatUint(runSeq.Add(1), 10)
}

// withTag returns env (nil: rein's) with tag added to [EnvTag], the tags already there kept:
// a rein started by another rein's tool stays answerable to the outer one.
func withTag(env []string, tag string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	value := tag
	for _, kv := range env {
		if old, ok := strings.CutPrefix(kv, EnvTag+"="); ok {
			if old != "" {
				value = old + ":" + tag
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, EnvTag+"="+value)
}

// tagsIn returns the tags of a process environment as /proc/<pid>/environ holds it
// (NUL-separated); the last assignment counts, as getenv finds it.
func tagsIn(environ []byte) []string {
	var value string
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, EnvTag+"="); ok {
			value = v
		}
	}
	if value == "" {
		return nil
	}
	return strings.Split(value, ":")
}

// tagMatch says which tags select a process: one run's tag exactly, or every tracked run of
// one rein process (id given, keep tags excluded).
type tagMatch struct {
	tag string
	id  string
}

func (m tagMatch) selects(tags []string) bool {
	for _, t := range tags {
		if m.tag != "" && t == m.tag {
			return true
		}
		if n, ok := strings.CutPrefix(t, m.id+"."); m.id != "" && ok && n != keepSuffix {
			return true
		}
	}
	return false
}

// ownedBy reports whether tags hold a tag of rein process id (kept or not).
func ownedBy(tags []string, id string) bool {
	for _, t := range tags {
		if strings.HasPrefix(t, id+".") {
			return true
		}
	}
	return false
}
