package loop

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/secret"
)

// Checkpoint is the loop's memory after a round, in the loop ledger (loop.checkpoint). What
// memory.exclude names is left out; secrets never enter one (a finding refuses writing it).
type Checkpoint struct {
	Round          int                  `json:"round"`
	ContractDigest artifact.Digest      `json:"contractDigest"`
	CompletedScope string               `json:"completedScope,omitempty"` // current_scope
	Decisions      []string             `json:"decisions,omitempty"`
	Artifacts      map[string]string    `json:"artifacts,omitempty"`    // artifacts: "workspace" → tree digest
	Verification   []VerificationResult `json:"verification,omitempty"` // verification
	RootCauses     []RootCause          `json:"rootCauses,omitempty"`   // failures
	OpenItems      []string             `json:"openItems,omitempty"`    // open_items
	NextStep       string               `json:"nextStep,omitempty"`     // next_action
	Excluded       []string             `json:"excluded"`
}

// RootCause is a failing fingerprint with the rounds it failed in.
type RootCause struct {
	Fingerprint string   `json:"fingerprint"`
	Check       string   `json:"check"`
	Signature   []string `json:"signature"`
	Rounds      []int    `json:"rounds"`
}

// filter drops the memory classes the contract excludes (or does not persist).
func (c *Checkpoint) filter(persist []string) {
	keep := func(class string) bool { return slices.Contains(persist, class) }
	var ex []string
	drop := func(class string, f func()) {
		if !keep(class) {
			f()
			ex = append(ex, class)
		}
	}
	drop("current_scope", func() { c.CompletedScope = "" })
	drop("decisions", func() { c.Decisions = nil })
	drop("artifacts", func() { c.Artifacts = nil })
	drop("verification", func() { c.Verification = nil })
	drop("failures", func() { c.RootCauses = nil })
	drop("open_items", func() { c.OpenItems = nil })
	drop("next_action", func() { c.NextStep = "" })
	c.Excluded = append(ex, "raw_credentials", "secrets", "transcripts")
}

// scanned returns the checkpoint's JSON after a secret scan: any finding, or a scan that
// failed, refuses it (fail closed).
func (c *Checkpoint) scanned() (json.RawMessage, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	fs, err := secret.Scan(string(data))
	if err != nil {
		return nil, fmt.Errorf("checkpoint of round %d: secret scan failed, not written: %w", c.Round, err)
	}
	if len(fs) > 0 {
		ids := make([]string, len(fs))
		for i, f := range fs {
			ids[i] = f.RuleID
		}
		return nil, fmt.Errorf("checkpoint of round %d holds %d secret(s) (%s): not written", c.Round, len(fs), strings.Join(ids, ", "))
	}
	return data, nil
}

// maxTreeFiles bounds the workspace digest's walk.
const maxTreeFiles = 50000

// treeDigest is the sha256 over the workspace's regular files (not .git, not .rein) in
// lexical order: path, NUL, the file's sha256, newline. It tells a checkpoint's workspace
// from one changed since.
func treeDigest(root string) (string, error) {
	var b strings.Builder
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".rein") && rel != "." {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n++; n > maxTreeFiles {
			return fmt.Errorf("more than %d files", maxTreeFiles)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s\x00%s\n", filepath.ToSlash(rel), artifact.Sum(data))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("digest of the workspace %s: %w", root, err)
	}
	return string(artifact.Sum([]byte(b.String()))), nil
}
