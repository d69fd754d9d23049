package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
)

// WriteFile creates or replaces a text file, with the user's permission.
type WriteFile struct{}

var writeFileParams = params{
	{Name: "path", Type: "string", Required: true, Description: "The file to write, relative to the working directory or absolute."},
	{Name: "content", Type: "string", Required: true, Description: "The file's whole new content."},
}

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writeFileTitle is what a call is about, for the editor.
func writeFileTitle(a writeFileArgs) (string, []engine.Location) {
	return "Write " + a.Path, absLocation(a.Path)
}

func (WriteFile) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a writeFileArgs
	if err := writeFileParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("write_file: %v", err)
	}
	ws := call.Workspace
	path, err := writable(ws, a.Path)
	if err != nil {
		return engine.Errorf("write_file refused: %v", err)
	}
	shown := display(ws, path)
	old, refusal := currentText(ctx, ws, path, shown)
	if refusal != "" {
		return engine.Errorf("write_file refused: %s", refusal)
	}
	locs := []engine.Location{{Path: path, Line: 1}}
	if old != nil && call.KeepExisting {
		// Refused before anything is written, or asked.
		return engine.Errorf("write_file refused: %s exists, and overwrite_artifacts is false here: write the file to a new path, and hand that back", shown)
	}
	if old != nil && *old == a.Content {
		return engine.ToolResult{Output: fmt.Sprintf("%s already has exactly this content; nothing was written.", shown), Title: "Write " + shown, Locations: locs}
	}
	title := "Write " + shown
	diff := []engine.ToolContent{{Diff: &engine.Diff{Path: path, OldText: old, NewText: a.Content}}}
	what := "writing " + shown
	if denied := ask(ctx, call, "write_file", title, what, locs, diff); denied != nil {
		return *denied
	}
	if err := ws.WriteTextFile(ctx, path, a.Content); err != nil {
		r := engine.Errorf("write_file: %s", describeErr(shown, err))
		r.Locations = locs
		return r
	}
	verb := "Replaced"
	if old == nil {
		verb = "Created"
	}
	return engine.ToolResult{
		Output:    fmt.Sprintf("%s %s: %d bytes, %d lines.", verb, shown, len(a.Content), lineCount(a.Content)),
		Title:     title,
		Locations: locs,
		Content:   diff,
		Written:   []string{path},
		// What the model put in the file: private, if the file is.
		Sources: []taint.Source{{Path: path, Text: a.Content}},
	}
}

// currentText is a file's text before a change (nil when it does not exist
// yet), or why it must not be changed as text.
func currentText(ctx context.Context, ws engine.Workspace, path, shown string) (*string, string) {
	size, refusal, err := sniffDisk(disk(ws), path, shown)
	switch {
	case err != nil:
		return nil, describeErr(shown, err)
	case size < 0:
		return nil, ""
	case refusal != "":
		return nil, refusal
	case size > maxEditSize:
		return nil, fmt.Sprintf("%s is %d bytes, more than the %d bytes that can be changed as text", shown, size, maxEditSize)
	}
	text, err := ws.ReadTextFile(ctx, path)
	if err != nil {
		return nil, describeErr(shown, err)
	}
	return &text, ""
}

func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
