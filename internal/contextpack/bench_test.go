package contextpack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/contextpack"
)

// BenchmarkAssemble50Files200Skills measures Load + Assemble for a repository whose working
// directory is 49 levels deep with an AGENTS.md (about 2 KiB) at every level, plus the global
// one (50 context files), and 200 skills: 100 in .rein/skills, 50 in .agents/skills and 50 in
// $REIN_HOME/skills. Sub-benchmarks: the bytes/4 estimate, and OpenAI's o200k_base tokenizer.
func BenchmarkAssemble50Files200Skills(b *testing.B) {
	in := bigTree(b)
	for _, est := range []contextpack.Estimator{contextpack.Bytes4{}, contextpack.EstimatorFor("openai", "gpt-5")} {
		b.Run(est.Name(), func(b *testing.B) {
			a := contextpack.Build(in, est)
			if n := countSources(a, contextpack.SectionContext); n != 50 {
				b.Fatalf("%d context files, want 50", n)
			}
			if n := countSources(a, contextpack.SectionSkills); n != 200 {
				b.Fatalf("%d skills, want 200; diagnostics: %q", n, a.Diagnostics)
			}
			tokens := 0
			for _, s := range a.Sections {
				tokens += s.Tokens
			}
			b.ReportAllocs()
			for b.Loop() {
				contextpack.Build(in, est)
			}
			b.ReportMetric(float64(len(a.Prompt)), "prompt-bytes")
			b.ReportMetric(float64(tokens), "prompt-tokens")
		})
	}
}

func countSources(a *contextpack.Assembly, name string) int {
	n := 0
	for _, s := range a.Sections {
		if s.Name == name && s.Source != "" {
			n++
		}
	}
	return n
}

func bigTree(b *testing.B) contextpack.Inputs {
	b.Helper()
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	write := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	body := func(i int) string {
		return fmt.Sprintf("# Level %d\n\n%s", i, strings.Repeat(fmt.Sprintf("- Rule %d: keep functions small, test every change, and document exported names.\n", i), 24))
	}
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(home, "AGENTS.md"), body(0))
	dir := repo
	for i := 1; i < 50; i++ {
		if i > 1 {
			dir = filepath.Join(dir, fmt.Sprintf("d%02d", i))
		}
		write(filepath.Join(dir, "AGENTS.md"), body(i))
	}
	skill := func(base string, i int) {
		name := fmt.Sprintf("skill-%03d", i)
		write(filepath.Join(base, name, "SKILL.md"), fmt.Sprintf("---\nname: %s\ndescription: Do task number %d well. Use when the user asks for task %d or anything like it.\nlicense: MIT\n---\n# %s\n\n%s", name, i, i, name, strings.Repeat("Step by step instructions.\n", 40)))
	}
	for i := range 200 {
		switch {
		case i < 100:
			skill(filepath.Join(repo, ".rein", "skills"), i)
		case i < 150:
			skill(filepath.Join(repo, ".agents", "skills"), i)
		default:
			skill(filepath.Join(home, "skills"), i)
		}
	}
	return contextpack.Inputs{Dir: dir, Home: home, Tools: allTools, Date: date, ProjectTrusted: true}
}
