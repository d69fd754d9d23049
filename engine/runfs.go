package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// What later stages can read (DESIGN §15). A run's own record is readable
// by its tools as run:PATH (read_file, list_files and grep; engine/tools), read
// only and confined to the run's directory: runFiles is that directory as
// a Workspace whose every access goes through os.Root (Disk). Each stage
// visit writes its whole last response and its answer into its record, so
// that a preamble that clips them at maxInline names where the whole text
// is: "[… N more bytes, cut here; the whole text is at
// run:stages/002-review@1/answer]".

// RunPrefix starts a path that names a file of the run's own record.
const RunPrefix = "run:"

// errReadOnly refuses a change to the run's record through runFiles.
var errReadOnly = errors.New("the run's record (run:) is read-only")

// runFiles is a run's record directory (store.Store.RunDir) as a
// read-only Workspace: what Call.RunFiles hands a tool.
type runFiles struct{ dir string }

// IsRunFiles reports whether ws is a run's own record (Call.RunFiles),
// whose paths a tool shows as run:PATH and never as the project's.
func IsRunFiles(ws Workspace) bool {
	_, ok := ws.(*runFiles)
	return ok
}

func (f *runFiles) Cwd() string       { return f.dir }
func (f *runFiles) Roots() []string   { return []string{f.dir} }
func (f *runFiles) disk() rootfs.Disk { return rootfs.Disk{Roots: f.Roots()} }

func (f *runFiles) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := f.disk().ReadFile(path)
	return string(b), err
}

func (f *runFiles) OpenFile(_ context.Context, path string) (File, error) {
	file, err := f.disk().OpenSized(path)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f *runFiles) WriteTextFile(context.Context, string, string) error { return errReadOnly }

func (f *runFiles) RequestPermission(context.Context, PermissionRequest) (bool, error) {
	return false, errReadOnly
}

func (f *runFiles) RunCommand(context.Context, Command) (CommandResult, error) {
	return CommandResult{}, errReadOnly
}

// writeTexts writes the visit's last response (clipped: clipReply) and its
// answer, whole.
func (vr *visitRecord) writeTexts(v *stageVisit) {
	if v.lastText != "" {
		vr.WriteText(store.LastResponseFile, keptReply(v.lastText, vr.mask)...)
	}
	if v.submitted != nil {
		vr.WriteText(store.AnswerFile, vr.mask(v.submitted.Content))
	}
}

// outcome is what the finished visit leaves for later stages.
func (v *stageVisit) outcome() stageOutcome {
	// Masked before it is clipped: what later stages see of private
	// files (DESIGN §19).
	r := v.run
	o := stageOutcome{stage: v.stage.Name, response: r.mask(v.lastText), dir: v.rec.RunPath(),
		ended: v.ended, next: v.next, model: v.model, calls: len(v.rec.status.Calls), usage: v.usage,
		files: shownFiles(r.t.Workspace.Cwd(), v.written)}
	for _, rep := range v.reports {
		o.reports = append(o.reports, r.mask(rep))
	}
	if v.submitted != nil {
		o.answer = r.mask(v.submitted.Content)
		o.artifacts = v.submitted.Artifacts
		o.format, o.data = v.submitted.Format, r.mask(string(v.submitted.Data))
	}
	return o
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
