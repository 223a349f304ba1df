package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/strictjson"
)

// Approval is .rein/profile.approval.json: who approved which profile bytes, and when.
type Approval struct {
	Version       int             `json:"version"`
	Approver      string          `json:"approver"`
	ApprovedAt    time.Time       `json:"approvedAt"`
	ProfileDigest artifact.Digest `json:"profileDigest"`
}

// ApprovalState is the approval as it stands against the current profile.
type ApprovalState struct {
	Approval *Approval       // nil when there is none
	Current  artifact.Digest // the current profile's digest
	Valid    bool            // an approval exists and names the current digest
}

// Describe says in one line whether the profile is approved.
func (s ApprovalState) Describe() string {
	switch {
	case s.Approval == nil:
		return "not approved (approve it with `rein profile approve`)"
	case !s.Valid:
		return fmt.Sprintf("approval invalid: the profile changed since %s approved %s (now %s); review it and run `rein profile approve` again",
			s.Approval.Approver, s.Approval.ProfileDigest, s.Current)
	}
	return fmt.Sprintf("approved by %s at %s (%s)", s.Approval.Approver, s.Approval.ApprovedAt.UTC().Format(time.RFC3339), s.Approval.ProfileDigest)
}

// CheckApproval reads the approval of root's profile, whose digest is current.
func CheckApproval(root string, current artifact.Digest) (ApprovalState, error) {
	st := ApprovalState{Current: current}
	data, err := os.ReadFile(filepath.Join(root, ApprovalPath))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	var a Approval
	if err := strictjson.Unmarshal(data, &a); err != nil {
		return st, fmt.Errorf("%w: %s: %w", ErrNotApproved, ApprovalPath, err)
	}
	st.Approval = &a
	st.Valid = a.Version == 1 && a.ProfileDigest == current
	return st, nil
}

// Approve validates root's profile and records its approval by approver at now.
func Approve(root, approver string, now time.Time) (*Approval, error) {
	if approver == "" {
		return nil, fmt.Errorf("%w: an approval needs an approver", ErrNotApproved)
	}
	lp, err := LoadProfile(root)
	if err != nil {
		return nil, err
	}
	a := &Approval{Version: 1, Approver: approver, ApprovedAt: now.UTC().Truncate(time.Second), ProfileDigest: lp.Digest}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(root, ".rein"), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(root, ApprovalPath), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return a, nil
}

// RequireApproved loads root's profile and checks that it is valid and approved.
func RequireApproved(root string) (*LoadedProfile, error) {
	lp, err := LoadProfile(root)
	if err != nil {
		return nil, err
	}
	st, err := CheckApproval(root, lp.Digest)
	if err != nil {
		return nil, err
	}
	if !st.Valid {
		return nil, fmt.Errorf("%w: %s %s", ErrNotApproved, ProfilePath, st.Describe())
	}
	return lp, nil
}
