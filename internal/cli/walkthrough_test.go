package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

// walkthroughHeading is the README section that walks through a whole delivery run.
const walkthroughHeading = "### Walk-through: a run on the script model"

// TestREADMEWalkthrough runs the README's delivery-run walk-through as a testscript: its files
// (fenced blocks whose first line is "# file: PATH") and its script (the block whose first line
// is "# walk-through") become a txtar archive, the script runs with rein on PATH, and every
// "# → TEXT" the README promises must be in what it printed. A README edit that breaks the
// walk-through fails here; so does a behaviour change the README does not follow.
func TestREADMEWalkthrough(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n"+walkthroughHeading+"\n")
	if !ok {
		t.Fatalf("README has no %q section", walkthroughHeading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	files, script := walkthroughBlocks(t, sec)
	if script == "" || len(files) == 0 {
		t.Fatalf("the walk-through has %d file block(s) and no script block (first line \"# walk-through\")", len(files))
	}
	ar := &txtar.Archive{Comment: []byte("# generated from README.md, " + walkthroughHeading + "\n\nexec sh -e walk.sh\n")}
	for _, want := range regexp.MustCompile(`# → ([^\n]+)`).FindAllStringSubmatch(script, -1) {
		ar.Comment = append(ar.Comment, "stdout '"+strings.ReplaceAll(regexp.QuoteMeta(strings.TrimSpace(want[1])), "'", "''")+"'\n"...)
	}
	ar.Files = append(files, txtar.File{Name: "walk.sh", Data: []byte("exec 2>&1\nset -x\n" + script)})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "walkthrough.txtar"), txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{Dir: dir, Setup: scriptSetup})
}

// walkthroughBlocks returns the file blocks and the script block of a README section.
func walkthroughBlocks(t *testing.T, sec string) (files []txtar.File, script string) {
	t.Helper()
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(sec, -1) {
		first, body, _ := strings.Cut(m[1], "\n")
		switch {
		case strings.HasPrefix(first, "# file: "):
			files = append(files, txtar.File{Name: strings.TrimPrefix(first, "# file: "), Data: []byte(body)})
		case first == "# walk-through":
			script = body
		}
	}
	return files, script
}
