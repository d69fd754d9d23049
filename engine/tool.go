package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
)

// A Tool is something the model can call. Tools live in engine/tools, one
// file each; the engine itself provides submit_output and transition.
//
// A tool's failure (bad arguments, a missing file, a denied permission) is a
// ToolResult with IsError set, which the model sees; Run never panics on
// bad input.
type Tool interface {
	// Spec names the tool and gives the model its description and the JSON
	// Schema of its arguments.
	Spec() llm.ToolSpec
	// Kind is the ACP tool kind: read, edit, delete, move, search, execute,
	// think, fetch or other.
	Kind() string
	Run(ctx context.Context, call *Call) ToolResult
}

// A Titler is a Tool that can say, before it runs, what a call is about.
type Titler interface {
	Title(args json.RawMessage) (title string, locations []Location)
}

// titleOf is how the editor shows a call of tool (named name) with args:
// the tool's own title and locations when it is a Titler and has one,
// else its name.
func titleOf(tool Tool, name string, args json.RawMessage) (string, []Location) {
	var title string
	var locs []Location
	if t, ok := tool.(Titler); ok {
		title, locs = t.Title(args)
	}
	return cmp.Or(title, name), locs
}

// A PermissionAsker is a Tool that says whether its calls wait for the
// user's approval, whatever its kind: an MCP server's tool asks even when
// the server calls it read-only. Without it, tools of the kinds that
// change things (edit, delete, move, execute) ask. A call that asks starts
// "pending" in the editor.
type PermissionAsker interface {
	AsksPermission() bool
}

// A Call is one invocation of a tool.
type Call struct {
	ID        string
	Args      json.RawMessage
	Stage     string
	Workspace Workspace
	// Progress reports an update (content, locations) while the tool runs;
	// never nil.
	Progress func(ToolCallEvent)
	// RunDir is the run's own record, which tools read as run:PATH
	// (RunFiles); "" when the run keeps none.
	RunDir string
	// Approved says the user has approved this call already (the taint
	// gate's question covered it): a tool that asks before each call does
	// not ask again.
	Approved bool
	// KeepExisting says overwrite_artifacts = false is in effect for the
	// stage: write_file and edit_file refuse to replace or change a file
	// that exists, before they write anything, rather than the answer
	// being refused after the user's file was gone.
	KeepExisting bool

	flush func() // writes what the record has queued (store.Run.Flush)
}

// RunFiles is the run's own record (RunDir) as a read-only Workspace,
// every file queued so far written.
func (c *Call) RunFiles() Workspace {
	if c.flush != nil {
		c.flush()
	}
	return &runFiles{dir: filepath.Clean(c.RunDir)}
}

// A ToolResult is what a tool call produced.
type ToolResult struct {
	Output  string // what the model is sent
	IsError bool
	// What the editor is shown. When Content is empty the editor is shown
	// Output as text.
	Title     string
	Locations []Location
	Content   []ToolContent
	// Written lists files the call changed, for the run record.
	Written []string
	// Sources are the files whose content the result carries to the model
	// (what was read, grep's matching lines, an edit's text), for the
	// taint gate.
	Sources []taint.Source

	private string // the private sources it carries, named, for the record
	// untrusted says the model is fed Output framed as data (frame.go):
	// what a tool, an MCP server, a worker or a child produced, as against
	// coda's own word (a refused submission, an unknown tool).
	untrusted bool
}

// Errorf builds a failed ToolResult for the model.
func Errorf(format string, args ...any) ToolResult {
	return ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Ask asks the user whether call may go ahead with req, unless the call was
// approved already (the taint gate's question covered it). The request
// shows the call under its id, pending, with its arguments; req gives the
// rest (its title, kind, locations, content). It returns nil
// when the call may go ahead (and marks it in progress), else the result
// the model gets: skipped says what not going ahead means ("nothing was
// changed"), and what, when not "", names what the user refused. The one
// rule for how a tool that asks (write_file, edit_file, shell, MCP tools)
// waits on the user.
func Ask(ctx context.Context, call *Call, req PermissionRequest, skipped, what string) *ToolResult {
	if !call.Approved {
		req.ToolCall.ID, req.ToolCall.Status, req.ToolCall.RawInput = call.ID, ToolPending, call.Args
		ok, err := call.Workspace.RequestPermission(ctx, req)
		if !ok || err != nil {
			name := req.Key
			var res ToolResult
			switch {
			case ctx.Err() != nil:
				res = Errorf("%s was cancelled before the user answered; %s.", name, skipped)
			case err != nil:
				res = Errorf("%s could not ask the user for permission (%v); %s.", name, err, skipped)
			case what != "":
				res = Errorf("The user denied %s: %s. %s. Do not retry the same call; carry on without it or ask the user.", name, what, upperFirst(skipped))
			default:
				res = Errorf("The user denied %s; %s. Do not retry the same call; carry on without it or ask the user.", name, skipped)
			}
			return &res
		}
	}
	// Approved: the call leaves "pending" and runs.
	call.Progress(ToolCallEvent{Status: ToolInProgress})
	return nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
