package tools

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// table is every tool of this package, one entry each: its name, which is
// also its description's file beside its own (read_file.md), its ACP kind,
// its arguments, the title of a call, whether it can send what it carries
// off the machine, and the type whose Run runs it. Spec, Kind, Title and
// Egress are derived from the entry, so a new tool is one entry here and a
// file with its params, its title and its Run.
var table = []entry{
	{name: "read_file", kind: "read", params: readFileParams, title: titled(readFileTitle), run: ReadFile{}},
	{name: "list_files", kind: "search", params: listFilesParams, title: titled(listFilesTitle), run: ListFiles{}},
	{name: "grep", kind: "search", params: grepParams, title: titled(grepTitle), run: Grep{}},
	{name: "write_file", kind: "edit", params: writeFileParams, title: titled(writeFileTitle), run: WriteFile{}},
	{name: "edit_file", kind: "edit", params: editFileParams, title: titled(editFileTitle), run: EditFile{}},
	{name: "shell", kind: "execute", params: shellParams, title: titled(shellCallTitle), run: Shell{}, egress: true, untracked: true},
}

// An entry is one row of the table.
type entry struct {
	name   string
	kind   string // read, edit, search, execute...: what the editor shows
	params params
	// title says what a call is about, from its arguments; "" when they
	// do not decode (the call is then shown by the tool's name).
	title func(params, json.RawMessage) (string, []engine.Location)
	// egress: in a tainted run a call meets the taint gate first.
	egress bool
	// untracked: a call may change files without saying which, so the
	// engine compares the roots before and after it (engine.UntrackedWriter).
	untracked bool
	run       runner
}

// A runner runs a tool's calls: the type each tool's file defines.
type runner interface {
	Run(ctx context.Context, call *engine.Call) engine.ToolResult
}

//go:embed *.md
var descriptions embed.FS

// Builtin returns every tool of this package by name, for blueprints'
// available_tools.
func Builtin() map[string]engine.Tool {
	m := make(map[string]engine.Tool, len(table))
	for i := range table {
		e := &table[i]
		desc, err := descriptions.ReadFile(e.name + ".md")
		if err != nil {
			panic(fmt.Sprintf("tools: %s has no description: %v", e.name, err))
		}
		m[e.name] = &builtin{e, llm.ToolSpec{Name: e.name, Description: string(desc), Schema: e.params.Schema()}}
	}
	m["ask_user"] = AskUser{} // its arguments are no table's (ask_user.go)
	return m
}

// titled makes an entry's title from a function of the decoded arguments.
func titled[A any](f func(A) (string, []engine.Location)) func(params, json.RawMessage) (string, []engine.Location) {
	return func(ps params, raw json.RawMessage) (string, []engine.Location) {
		var a A
		if ps.decode(raw, &a) != nil {
			return "", nil
		}
		return f(a)
	}
}

// kindOf is the kind of the tool named name, for what its Run reports.
func kindOf(name string) string {
	for i := range table {
		if table[i].name == name {
			return table[i].kind
		}
	}
	panic("tools: no tool " + name)
}

// builtin is an entry as an engine.Tool (and engine.Titler and
// engine.Egress).
type builtin struct {
	e    *entry
	spec llm.ToolSpec
}

func (t *builtin) Spec() llm.ToolSpec { return t.spec }

func (t *builtin) Kind() string { return t.e.kind }

func (t *builtin) Egress() bool { return t.e.egress }

func (t *builtin) WritesUntracked() bool { return t.e.untracked }

func (t *builtin) Title(args json.RawMessage) (string, []engine.Location) {
	if title, locs := t.e.title(t.e.params, args); title != "" {
		return title, locs
	}
	return t.e.name, nil
}

func (t *builtin) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	return t.e.run.Run(ctx, call)
}
