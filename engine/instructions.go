package engine

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/internal/textcut"
)

// Project instructions (DESIGN §8): an AGENTS.md at the root of the turn's
// working directory, the common convention for what a project asks of the
// agents that work in it, is given to every stage after the stage's own
// prompt and before the output spec, which still governs how the answer is
// presented (DESIGN §3). It is the project's own words, not untrusted data:
// it stands in the system prompt as itself, not framed. At most
// maxProjectInstructions bytes are given, the cut noted. [agent]
// project_instructions = false, or Engine.NoProjectInstructions
// (--no-project-instructions), leaves it out.

// projectInstructionsFile is the file read at the working directory's
// root.
const projectInstructionsFile = "AGENTS.md"

// maxProjectInstructions is the most of AGENTS.md a stage is given.
const maxProjectInstructions = 32 << 10

// projectInstructions reads the turn's AGENTS.md through its roots: only
// a regular file, never by a symlink that leads out of them. It returns
// the block the stages' system prompts carry ("" without one) and a
// warning when a file is there but cannot be given.
func projectInstructions(ws Workspace) (block, warning string) {
	if ws == nil || ws.Cwd() == "" {
		return "", ""
	}
	disk := rootfs.Disk{Roots: ws.Roots()}
	path := filepath.Join(ws.Cwd(), projectInstructionsFile)
	fi, err := disk.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return "", fmt.Sprintf("%s is not a regular file: the stages are not given it", projectInstructionsFile)
	case errors.Is(err, rootfs.ErrOutside):
		return "", fmt.Sprintf("%s leads outside the workspace: the stages are not given it", projectInstructionsFile)
	case err != nil:
		return "", "" // none (or none readable): nothing to give
	}
	f, err := disk.Open(path)
	if err != nil {
		return "", fmt.Sprintf("%s could not be read (%v): the stages are not given it", projectInstructionsFile, rootfs.UnwrapPath(err))
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() {
		return "", fmt.Sprintf("%s is not a regular file: the stages are not given it", projectInstructionsFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProjectInstructions+1))
	if err != nil {
		return "", fmt.Sprintf("%s could not be read (%v): the stages are not given it", projectInstructionsFile, err)
	}
	text := string(data)
	cut := ""
	if len(data) > maxProjectInstructions {
		text = textcut.At(text, maxProjectInstructions)
		size := fi.Size()
		if now, err := f.Stat(); err == nil {
			size = now.Size()
		}
		cut = fmt.Sprintf("\n\n[%s is cut here: it is %s, and only its first %s are given.]", projectInstructionsFile, bytesize.Format(int(size)), bytesize.Format(maxProjectInstructions))
	}
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	if text == "" {
		return "", ""
	}
	return projectInstructionsHead + text + cut, ""
}

// projectInstructionsHead opens the block: what it is, and what governs
// over it.
const projectInstructionsHead = "## Project instructions (" + projectInstructionsFile + ")\n\n" +
	"The project's own instructions, from " + projectInstructionsFile + " at the root of the working directory. " +
	"Follow them where they bear on this task. Where an answer format is given below, it still governs how the answer is presented.\n\n"

// projectInstructions is the block of the turn's AGENTS.md that r's stages
// are given, "" when they are given none. The file is read once a turn,
// when a stage first needs it; its workers and children share what was
// read.
func (r *run) projectInstructions() string {
	if r.e.NoProjectInstructions || !r.t.Agent.Agent.ReadsProjectInstructions() {
		return ""
	}
	tr := r.share
	tr.projectOnce.Do(func() {
		var warning string
		tr.project, warning = projectInstructions(tr.ws)
		if warning != "" {
			r.warn(warning)
		}
	})
	return tr.project
}
