package engine

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coda-acp/coda/internal/rootfs"
)

// Files touched, all of them (DESIGN §19). write_file and edit_file say
// which files they changed (ToolResult.Written); a shell command or an MCP
// server's tool (an UntrackedWriter) does not, so the engine looks: a
// snapshot of the roots' files (size, modification time, mode) before and
// after each call, compared. A snapshot rather than `git status`: it needs
// no git and no process per call, works outside a repository, sees ignored
// files (build output a command wrote), and sees a file changed again that
// git would show modified before and after alike. It is bounded: of the
// folders rootfs.Pruned names, the build output a command writes (dist,
// target: builtFolders) is walked, within a budget of its own so that a
// large one never hides the rest of the tree, and the others (.git,
// dependencies, caches) are not; past maxSnapshotEntries entries the rest
// of the tree is not looked at (the visit's status.json says so). Capture
// still skips every pruned folder. Every file touched is listed in
// status.json's filesWritten, in the next stage's preamble and in the
// plan's entry for the stage.

// An UntrackedWriter is a Tool whose calls may change files under the
// session's roots without saying which (a shell command, an MCP server's
// tool): the engine compares the roots' files before and after each call.
type UntrackedWriter interface {
	WritesUntracked() bool
}

// maxSnapshotEntries bounds what one snapshot walks, files and folders of
// every root together: a walk of 20,000 entries takes a few tens of
// milliseconds, which a command's own run dwarfs.
const maxSnapshotEntries = 20000

// maxSnapshotTime bounds what one snapshot takes, whatever it has walked:
// a slow or network file system (or one a command keeps busy) can make
// 20,000 stats take seconds, paid twice a call. A snapshot stopped by it
// is partial, as one stopped by its entries is.
const maxSnapshotTime = 2 * time.Second

// snapshotClockEvery is how many entries a snapshot walks between two
// looks at the clock.
const snapshotClockEvery = 64

// builtFolders are the folders of rootfs.Pruned that hold build output,
// which the snapshot walks; maxBuiltEntries bounds what one snapshot walks
// of them, apart from the rest.
var builtFolders = []string{"dist", "target"}

const maxBuiltEntries = 20000

// notWalked are the folders the snapshot skips: rootfs.Pruned but the
// build output.
var notWalked = slices.DeleteFunc(slices.Clone(rootfs.Pruned), func(name string) bool { return slices.Contains(builtFolders, name) })

// A stamp is what a snapshot keeps of a file.
type stamp struct {
	size  int64
	mod   time.Time
	mode  fs.FileMode
	built bool // under a build output folder
}

// A snapshot is the roots' files by absolute path; partial when the walk
// stopped at maxSnapshotEntries, builtPartial when what it walked of the
// build output folders stopped at maxBuiltEntries.
type snapshot struct {
	files                 map[string]stamp
	partial, builtPartial bool
}

// takeSnapshot walks roots, but for the state directory state (where
// the run's own record is written while it runs), when it lies under one.
func takeSnapshot(roots []string, state string) *snapshot {
	return snapshotWithin(roots, state, maxSnapshotEntries, maxBuiltEntries, time.Now)
}

// snapshotWithin is takeSnapshot within budgets of its own (of the tree,
// of the build output) and on a clock of its own (now), for tests.
func snapshotWithin(roots []string, state string, maxEntries, maxBuilt int, now func() time.Time) *snapshot {
	s := &snapshot{files: map[string]stamp{}}
	deadline := now().Add(maxSnapshotTime)
	walked := 0
	if state != "" {
		state, _ = filepath.Abs(state)
	}
	seen, built := 0, 0
	for _, root := range roots {
		root = filepath.Clean(root)
		_ = rootfs.WalkExcept(root, notWalked, func(rel string, d fs.DirEntry) error {
			if walked++; walked%snapshotClockEvery == 0 && now().After(deadline) {
				s.partial = true
				return rootfs.ErrStop
			}
			inBuilt := underBuilt(rel)
			switch {
			case !inBuilt:
				if seen++; seen > maxEntries {
					s.partial = true
					return rootfs.ErrStop
				}
			case built >= maxBuilt:
				s.builtPartial = true
				return fs.SkipDir // the folder, or the rest of the file's folder
			default:
				built++
			}
			if d.IsDir() {
				if state != "" && filepath.Join(root, filepath.FromSlash(rel)) == state {
					return fs.SkipDir
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			s.files[filepath.Join(root, filepath.FromSlash(rel))] = stamp{size: info.Size(), mod: info.ModTime(), mode: info.Mode(), built: inBuilt}
			return nil
		})
		if s.partial {
			break
		}
	}
	return s
}

// underBuilt reports whether rel (slash-separated) is a build output
// folder or lies in one.
func underBuilt(rel string) bool {
	for rel != "" {
		name, rest, _ := strings.Cut(rel, "/")
		if slices.Contains(builtFolders, name) {
			return true
		}
		rel = rest
	}
	return false
}

// changes are the files that differ from before to after: made, changed
// or removed, in order; existed are those among them that were there
// before (a replaced file, for overwrite_artifacts). A file past a partial
// snapshot's end is not compared: it may only have been out of sight.
func (before *snapshot) changes(after *snapshot) (touched, existed []string) {
	for p, a := range after.files {
		b, was := before.files[p]
		switch {
		case !was && before.cutShort(a):
		case !was:
			touched = append(touched, p)
		case a != b:
			touched, existed = append(touched, p), append(existed, p)
		}
	}
	for p, b := range before.files {
		if _, is := after.files[p]; !is && !after.cutShort(b) {
			touched, existed = append(touched, p), append(existed, p)
		}
	}
	slices.Sort(touched)
	slices.Sort(existed)
	return touched, existed
}

// cutShort reports whether the walk that took s may have missed a file
// like st: the part of the tree it lies in was not walked to its end.
func (s *snapshot) cutShort(st stamp) bool {
	if st.built {
		return s.builtPartial || s.partial
	}
	return s.partial
}

// writesUntracked reports whether tool's calls are to be watched.
func writesUntracked(tool Tool) bool {
	w, ok := tool.(UntrackedWriter)
	return ok && w.WritesUntracked()
}

// touched adds files to what the visit and the run wrote, each once: its
// tools', and its workers' and children's (subrun_*.go).
func (v *stageVisit) touched(files []string) {
	for _, f := range files {
		if !slices.Contains(v.written, f) {
			v.written = append(v.written, f)
		}
	}
	v.run.wrote(files)
}

// wrote adds files to what the run wrote, each once.
func (r *run) wrote(files []string) {
	for _, f := range files {
		if !slices.Contains(r.written, f) {
			r.written = append(r.written, f)
		}
	}
}

// shownFiles are files as a later stage and the plan show them: relative
// to the working directory when under it, slash-separated.
func shownFiles(cwd string, files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f
		if rel, err := filepath.Rel(cwd, f); err == nil && cwd != "" && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out[i] = filepath.ToSlash(rel)
		}
	}
	return out
}

// fileList names files in a line: at most five, then how many more.
func fileList(files []string) string {
	if len(files) <= 5 {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:5], ", "), len(files)-5)
}

// planFiles adds files to the plan's entry for stage, each once.
func (r *run) planFiles(stage string, files []string) {
	if len(files) == 0 {
		return
	}
	for i := range r.plan {
		if r.plan[i].Content != stage {
			continue
		}
		for _, f := range shownFiles(r.t.Workspace.Cwd(), files) {
			if !slices.Contains(r.plan[i].Files, f) {
				r.plan[i].Files = append(r.plan[i].Files, f)
			}
		}
	}
}
