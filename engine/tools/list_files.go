package tools

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/glob"
)

// listMax caps the paths list_files returns.
const listMax = 1000

// ListFiles lists the files under a directory, optionally matching a glob.
type ListFiles struct{}

var listFilesParams = params{
	{Name: "path", Type: "string", Description: "The directory to list, relative to the working directory or absolute (default: the working directory)."},
	{Name: "pattern", Type: "string", Description: "A glob the paths under it must match, such as `**/*.go` or `src/*.ts`; `**` spans directories; a pattern without `/` matches file names at any depth."},
}

type listFilesArgs struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
}

// listFilesTitle is what a call is about, for the editor.
func listFilesTitle(a listFilesArgs) (string, []engine.Location) {
	title := "List " + cmp.Or(a.Path, ".")
	if a.Pattern != "" {
		title += " matching " + a.Pattern
	}
	return title, absLocation(a.Path)
}

func (ListFiles) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a listFilesArgs
	if err := listFilesParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("list_files: %v", err)
	}
	ws, root, err := target(call, cmp.Or(a.Path, "."))
	if err != nil {
		return engine.Errorf("list_files refused: %v", err)
	}
	shown := display(ws, root)
	dk := disk(ws)
	fi, err := dk.Stat(root)
	if err != nil {
		return engine.Errorf("list_files: %s", describeErr(shown, err))
	}
	if !fi.IsDir() {
		return engine.Errorf("list_files: %s is a file, not a directory; use read_file to read it", shown)
	}
	var g *glob.Pattern
	if a.Pattern != "" {
		c, err := glob.Compile(a.Pattern)
		if err != nil {
			return engine.Errorf("list_files: %v", err)
		}
		g = &c
	}

	var found []string
	more := 0
	err = walkFiles(ctx, dk, root, g, func(e walkEntry) error {
		if len(found) == listMax {
			more++
			return nil
		}
		name := display(ws, filepath.Join(root, filepath.FromSlash(e.rel)))
		if e.typ&fs.ModeSymlink != 0 {
			name += " (symlink)"
		}
		found = append(found, name)
		return nil
	})
	if err != nil {
		return engine.Errorf("list_files: %s", describeErr(shown, err))
	}

	var b strings.Builder
	what := "files"
	if a.Pattern != "" {
		what = fmt.Sprintf("files matching %s", a.Pattern)
	}
	switch {
	case len(found) == 0:
		fmt.Fprintf(&b, "No %s under %s.\n", what, shown)
	default:
		fmt.Fprintf(&b, "%d %s under %s:\n", len(found)+more, what, shown)
		for _, f := range found {
			b.WriteString(f)
			b.WriteByte('\n')
		}
		if more > 0 {
			fmt.Fprintf(&b, "[%d more not shown; narrow the path or the pattern]\n", more)
		}
	}
	return engine.ToolResult{Output: b.String(), Title: "List " + shown, Locations: located(ws, root)}
}
