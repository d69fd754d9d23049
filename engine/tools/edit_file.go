package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
)

// EditFile replaces one exact, unique piece of a text file, with the user's
// permission.
type EditFile struct{}

var editFileParams = params{
	{Name: "path", Type: "string", Required: true, Description: "The file to edit, relative to the working directory or absolute."},
	{Name: "old", Type: "string", Required: true, Description: "The exact text to replace; it must occur exactly once in the file."},
	{Name: "new", Type: "string", Required: true, Description: "The text to put in its place."},
}

type editFileArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// editFileTitle is what a call is about, for the editor.
func editFileTitle(a editFileArgs) (string, []engine.Location) {
	return "Edit " + a.Path, absLocation(a.Path)
}

func (EditFile) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a editFileArgs
	if err := editFileParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("edit_file: %v", err)
	}
	if a.Old == "" {
		return engine.Errorf("edit_file: old is empty; give the exact text to replace (to create a file, use write_file)")
	}
	if a.Old == a.New {
		return engine.Errorf("edit_file: old and new are the same; nothing would change")
	}
	ws := call.Workspace
	path, err := writable(ws, a.Path)
	if err != nil {
		return engine.Errorf("edit_file refused: %v", err)
	}
	shown := display(ws, path)
	locs := []engine.Location{{Path: path}}
	fail := func(format string, args ...any) engine.ToolResult {
		r := engine.Errorf(format, args...)
		r.Locations = locs
		return r
	}
	cur, refusal := currentText(ctx, ws, path, shown)
	if refusal != "" {
		return fail("edit_file refused: %s", refusal)
	}
	if cur == nil {
		return fail("edit_file: %s does not exist; use write_file to create it", shown)
	}
	if call.KeepExisting {
		// An edited file is a replaced one, which overwrite_artifacts =
		// false forbids an artifact to be (as write_file does): refused
		// before anything is written, or asked.
		return fail("edit_file refused: %s exists, and overwrite_artifacts is false here: write the changed text to a new path with write_file, and hand that back", shown)
	}
	text := *cur

	old, repl := a.Old, a.New
	n := strings.Count(text, old)
	if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(old, "\r\n") {
		// The file has Windows line endings; the model wrote \n.
		crOld := strings.ReplaceAll(old, "\n", "\r\n")
		if c := strings.Count(text, crOld); c > 0 {
			old, repl, n = crOld, strings.ReplaceAll(repl, "\n", "\r\n"), c
		}
	}
	switch {
	case n == 0:
		msg := fmt.Sprintf("edit_file: old was not found in %s; nothing was changed.", shown)
		if strings.Contains(squash(text), squash(old)) {
			msg += " Text that differs from it only in whitespace is there: read the file and copy the text exactly, indentation included."
		} else {
			msg += " Read the file again and copy the text to replace exactly."
		}
		return fail("%s", msg)
	case n > 1:
		return fail("edit_file: old occurs %d times in %s (lines %s); nothing was changed. Include more of the surrounding text so that it matches exactly once.", n, shown, matchLines(text, old, 5))
	}

	at := strings.Index(text, old)
	line := 1 + strings.Count(text[:at], "\n")
	locs[0].Line = line
	updated := text[:at] + repl + text[at+len(old):]
	title := fmt.Sprintf("Edit %s (line %d)", shown, line)
	diff := []engine.ToolContent{{Diff: &engine.Diff{Path: path, OldText: cur, NewText: updated}}}
	if denied := ask(ctx, call, "edit_file", title, "editing "+shown, locs, diff); denied != nil {
		return *denied
	}
	if err := ws.WriteTextFile(ctx, path, updated); err != nil {
		return fail("edit_file: %s", describeErr(shown, err))
	}
	return engine.ToolResult{
		Output:    fmt.Sprintf("Edited %s at line %d: replaced %d lines with %d.", shown, line, lineCount(old), lineCount(repl)),
		Title:     title,
		Locations: locs,
		Content:   diff,
		Written:   []string{path},
		// The text the model replaced and put in: private, if the file is.
		Sources: []taint.Source{{Path: path, Text: old + "\n" + repl}},
	}
}

// squash drops all whitespace, to tell a near miss from no match.
func squash(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// matchLines lists the lines where sub starts in s, at most max of them.
func matchLines(s, sub string, max int) string {
	var lines []string
	line, from := 1, 0
	for len(lines) < max {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			break
		}
		line += strings.Count(s[from:from+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(sub, "\n")
		from += i + len(sub)
	}
	out := strings.Join(lines, ", ")
	if strings.Count(s, sub) > max {
		out += ", …"
	}
	return out
}
