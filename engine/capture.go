package engine

import (
	"path/filepath"
	"slices"

	"github.com/coda-acp/coda/outputspec"
)

// Artifact capture by glob (DESIGN §19; outputspec.Contract.Capture): once
// an answer passes its checks, the files under the session's roots (the
// working directory and its additional directories) its contract's
// capture globs match are added to its artifacts, before the
// taint gate sees the answer, so that it weighs them as it weighs the files
// the model named. A private file is never captured; nor, under
// overwrite_artifacts = false, a file the run replaced. What was skipped
// and why is in the visit's status.json. A file the run's record already
// keeps at the same path and hash is not copied again (keep.go).

// captureStatus is status.json's "capture".
type captureStatus struct {
	Kept    []string             `json:"kept"`
	Skipped []outputspec.Skipped `json:"skipped"`
}

// capture adds the files the contract captures to an accepted verdict's
// artifacts, but for those it names already.
func (v *stageVisit) capture(verdict *outputspec.Verdict) {
	r := v.run
	keepExisting := v.contract.KeepsExisting()
	kept, skipped := v.contract.Capture(r.t.Workspace.Cwd(), r.t.Workspace.Roots(), func(abs string) string {
		if _, private := r.share.secrets.Private(abs); private {
			return "a private file under the taint gate's private paths"
		}
		if keepExisting && slices.Contains(r.overwritten, abs) {
			return "it replaced a file that existed before this run, and overwrite_artifacts is false"
		}
		return ""
	})
	if len(kept) == 0 && len(skipped) == 0 {
		return
	}
	st := &captureStatus{Kept: []string{}, Skipped: []outputspec.Skipped{}}
	for _, a := range kept {
		if slices.ContainsFunc(verdict.Artifacts, func(s outputspec.Artifact) bool { return filepath.ToSlash(s.Path) == a.Path }) {
			continue // the model named it
		}
		verdict.Artifacts = append(verdict.Artifacts, a)
		st.Kept = append(st.Kept, a.Path)
	}
	st.Skipped = append(st.Skipped, skipped...)
	v.rec.status.Capture = st
}
