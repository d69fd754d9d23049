package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// What later stages can read (DESIGN §15). A run's own record is readable
// by its tools as run:PATH (read_file, list_files and grep; engine/tools), read
// only and confined to the run's directory: RunFiles is that directory as
// a Workspace whose every access goes through os.Root (Disk). Each stage
// visit writes its whole last response and its answer into its record, so
// that a preamble that clips them at maxInline names where the whole text
// is: "[… N more bytes, cut here; the whole text is at
// run:stages/002-review@1/answer]".

// RunPrefix starts a path that names a file of the run's own record.
const RunPrefix = "run:"

// ErrReadOnly refuses a change to the run's record through RunFiles.
var ErrReadOnly = errors.New("the run's record (run:) is read-only")

// RunFiles is a run's record directory as a read-only Workspace.
type RunFiles struct{ dir string }

// NewRunFiles returns the record at dir (store.Store.RunDir) as a
// read-only Workspace.
func NewRunFiles(dir string) *RunFiles { return &RunFiles{dir: filepath.Clean(dir)} }

func (f *RunFiles) Cwd() string       { return f.dir }
func (f *RunFiles) Roots() []string   { return []string{f.dir} }
func (f *RunFiles) disk() rootfs.Disk { return rootfs.Disk{Roots: f.Roots()} }

func (f *RunFiles) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := f.disk().ReadFile(path)
	return string(b), err
}

func (f *RunFiles) OpenFile(_ context.Context, path string) (File, error) {
	file, err := f.disk().Open(path)
	if err != nil {
		return nil, err
	}
	return diskFile(file)
}

func (f *RunFiles) WriteTextFile(context.Context, string, string) error { return ErrReadOnly }

func (f *RunFiles) RequestPermission(context.Context, PermissionRequest) (bool, error) {
	return false, ErrReadOnly
}

func (f *RunFiles) RunCommand(context.Context, Command) (CommandResult, error) {
	return CommandResult{}, ErrReadOnly
}

// writeTexts writes the visit's last response and its answer, whole.
func (vr *visitRecord) writeTexts(v *stageVisit) {
	if v.lastText != "" {
		vr.WriteText(store.LastResponseFile, v.lastText)
	}
	if v.submitted != nil {
		vr.WriteText(store.AnswerFile, v.submitted.Content)
	}
}

// outcome is what the finished visit leaves for later stages.
func (v *stageVisit) outcome() stageOutcome {
	o := stageOutcome{stage: v.stage.Name, response: v.lastText, answer: v.answerContent(), dir: v.rec.RunPath(), reports: v.reports}
	if v.submitted != nil {
		o.artifacts = v.submitted.Artifacts
	}
	return o
}

// clipAt is clip for a text kept whole as file in the record at dir (a
// visit's run: path): the note names where, or says the rest is not kept.
func clipAt(s, dir, file string) string {
	if dir == "" {
		return clipNoted(s, "the rest is not kept (the run keeps no record)")
	}
	return clipNoted(s, "the whole text is at "+RunPrefix+dir+"/"+file)
}

// writeArtifacts lists an answer's artifacts for a later stage: each
// one's name, type, workspace path, and the copy in the run's record.
func writeArtifacts(b *strings.Builder, arts []outputspec.Artifact) {
	if len(arts) == 0 {
		return
	}
	b.WriteString("Artifacts:\n")
	for _, a := range arts {
		fmt.Fprintf(b, "- %s (%s): %s", a.Name, a.MimeType, a.Path)
		if a.RunPath != "" {
			fmt.Fprintf(b, ", kept at %s", a.RunPath)
		}
		b.WriteString("\n")
	}
}
