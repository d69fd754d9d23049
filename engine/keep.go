package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// Artifact copies (DESIGN §15): each accepted artifact up to
// maxArtifactCopy is copied into the run's record, runs/RUN/artifacts/,
// when its submission passes, so that `coda result RUN --artifacts DIR`
// can hand it back after the workspace has changed, and later stages can
// read it as run:artifacts/NAME. The answer record keeps the workspace
// path, and the copy's run: path beside it (Artifact.RunPath). Copies are
// named after the file, made safe, one name per workspace path in a run:
// a later submission of the same file replaces its copy, and two files of
// the same name get distinct ones.

// maxArtifactCopy is the largest artifact copied into a run's record
// unless Engine.MaxArtifactCopy says otherwise.
const maxArtifactCopy = 10 << 20

// artifactCopyLimit is the largest artifact the run copies into its
// record.
func (r *run) artifactCopyLimit() int64 {
	if r.e.MaxArtifactCopy > 0 {
		return r.e.MaxArtifactCopy
	}
	return maxArtifactCopy
}

// sizeOf says n bytes as the limit is usually written: in MiB when whole.
func sizeOf(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kept is what a run has copied into its record.
type kept struct {
	copies map[string]string // workspace path → name under artifacts/
	taken  map[string]bool   // names in use
	// sums are the sha256 of each copy, by workspace path: the same path
	// and hash is copied once a run (a resubmitted answer, a capture that
	// finds the file again).
	sums map[string]string
}

// keepArtifacts copies arts into the run's record and sets their RunPath.
// A file it cannot copy is said once in the warnings and keeps no RunPath.
func (r *run) keepArtifacts(arts []outputspec.Artifact) {
	if r.rec.Dir() == "" {
		return
	}
	for i := range arts {
		a := &arts[i]
		if limit := r.artifactCopyLimit(); a.Size > limit {
			r.warn(fmt.Sprintf("artifact %s (%s) is %d bytes, over the %s the run record keeps ([mime] max_part_bytes): `coda result --artifacts` cannot hand it back", a.Name, a.Path, a.Size, sizeOf(limit)))
			continue
		}
		name := r.copyName(a.Path)
		if r.kept.sums[a.Path] == a.SHA256 {
			a.RunPath = RunPrefix + store.ArtifactsDir + "/" + name
			continue
		}
		kept, sum, err := r.copyArtifact(a.Path, name)
		if err != nil {
			r.warn(fmt.Sprintf("artifact %s (%s) was not kept in the run record: %v", a.Name, a.Path, err))
			continue
		}
		if sum != a.SHA256 {
			r.warn(fmt.Sprintf("artifact %s (%s) changed after it was checked: the run record keeps it as it is now", a.Name, a.Path))
		}
		a.RunPath = RunPrefix + kept
		if r.kept.sums == nil {
			r.kept.sums = map[string]string{}
		}
		r.kept.sums[a.Path] = sum
	}
}

// copyName is the name under artifacts/ of the workspace file p: its
// base name made safe, and distinct from every other file's in this run.
func (r *run) copyName(p string) string {
	if name, ok := r.kept.copies[p]; ok {
		return name
	}
	if r.kept.copies == nil {
		r.kept.copies, r.kept.taken = map[string]string{}, map[string]bool{}
	}
	base := safeName(path.Base(p))
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	name := base
	for n := 2; r.kept.taken[name]; n++ {
		name = fmt.Sprintf("%s-%d%s", stem, n, ext)
	}
	r.kept.copies[p], r.kept.taken[name] = name, true
	return name
}

// safeName keeps letters, digits, '.', '-' and '_' of a file name, and
// never starts it with a dot.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	name := strings.TrimLeft(string(b), ".")
	if name == "" {
		return "artifact"
	}
	return name
}

// copyArtifact copies the workspace file p (relative to the working
// directory, slash-separated) into the record as name, reading it through
// the workspace's roots, and returns the copy's path in the record and
// the sha256 of what it copied.
func (r *run) copyArtifact(p, name string) (kept, sum string, err error) {
	ws := r.t.Workspace
	src := filepath.Join(ws.Cwd(), filepath.FromSlash(p))
	f, err := (rootfs.Disk{Roots: ws.Roots()}).Open(src)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	limit := r.artifactCopyLimit()
	kept, err = r.rec.KeepArtifact(name, func(w io.Writer) error {
		n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(f, limit+1))
		if err == nil && n > limit {
			err = errors.New("it grew past the size kept")
		}
		return err
	})
	return kept, hex.EncodeToString(h.Sum(nil)), err
}
