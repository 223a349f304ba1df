package system

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/internal/proc"
)

// ProcsDir is the directory of $REIN_HOME holding the journals of the processes running rein
// processes started (see internal/proc): what a rein that died left running is ended by the
// next one from them.
const ProcsDir = "procs"

// reapLeftovers ends what rein processes that died (SIGKILL, a crash) left running and says
// what it ended through notice. [Open] runs it first, so a resumed session's recovery, which
// records an interrupted tool call, finds no tool of it still running.
func reapLeftovers(home string, notice func(string)) {
	if home == "" {
		return
	}
	ended, err := proc.Reap(filepath.Join(home, ProcsDir))
	if len(ended) > 0 {
		names := make([]string, len(ended))
		for i, e := range ended {
			names[i] = e.String()
		}
		notice(fmt.Sprintf("ended %d process(es) an earlier rein left running when it died: %s", len(ended), strings.Join(names, ", ")))
	}
	if err != nil {
		notice(err.Error())
	}
}

// openJournal opens the journal of the processes this runtime's tools run (closed by
// Close; written before the first of them starts); none without a home.
func (rt *Runtime) openJournal(home string) *proc.Journal {
	if home == "" {
		return nil
	}
	rt.journal = proc.OpenJournal(filepath.Join(home, ProcsDir))
	return rt.journal
}

// noticeOr returns notice, or a function dropping the line when it is nil.
func noticeOr(notice func(string)) func(string) {
	if notice == nil {
		return func(string) {}
	}
	return notice
}
