package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/fileuri"
	"github.com/coda-acp/coda/internal/textcut"
)

// A Tool is one tool of a started server, as the model sees it.
type Tool struct {
	conn *Conn
	def  *sdk.Tool
	name string // SERVER__TOOL, made unique in its session (Tools)
}

var (
	_ engine.Tool    = (*Tool)(nil)
	_ engine.Titler  = (*Tool)(nil)
	_ engine.MCPTool = (*Tool)(nil)
	_ engine.Egress  = (*Tool)(nil)

	_ engine.PermissionAsker = (*Tool)(nil)
)

func (t *Tool) Spec() llm.ToolSpec {
	schema, err := json.Marshal(t.def.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = nil // the providers send an empty object schema
	}
	desc := t.def.Description
	if desc == "" {
		desc = t.def.Title
	}
	return llm.ToolSpec{Name: t.name, Description: desc, Schema: schema}
}

// Kind is what the server's annotations say of the tool: read when it
// changes nothing, edit when it may destroy, else other. Annotations are
// the server's word, not a guarantee: every call asks the user anyway.
func (t *Tool) Kind() string {
	a := t.def.Annotations
	switch {
	case a == nil:
		return "other"
	case a.ReadOnlyHint:
		return "read"
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return "edit"
	}
	return "other"
}

// MCP names the server and the tool as the editor and the server did, for
// a stage's "mcp:SERVER/TOOL".
func (t *Tool) MCP() (server, tool string) { return t.conn.server.Name, t.def.Name }

// AsksPermission: every call asks, whatever its annotations say.
func (t *Tool) AsksPermission() bool { return true }

// Egress: an MCP server may send what it is given anywhere.
func (t *Tool) Egress() bool { return true }

// WritesUntracked: a tool its server does not call read-only may change
// files under the roots without saying which, so the engine looks.
func (t *Tool) WritesUntracked() bool { return t.Kind() != "read" }

func (t *Tool) Title(json.RawMessage) (string, []engine.Location) {
	title := t.def.Title
	if title == "" && t.def.Annotations != nil {
		title = t.def.Annotations.Title
	}
	if title == "" {
		title = t.def.Name
	}
	return t.conn.server.Name + ": " + title, nil
}

func (t *Tool) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	res := t.run(ctx, call)
	// What the server asked the user meanwhile is in the result, so the
	// run's record has it (DESIGN §22).
	if notes := t.conn.takeAsked(); len(notes) > 0 {
		res.Output += "\n\n[During this call the MCP server " + t.conn.server.Name + " asked the user through coda: " + strings.Join(notes, "; ") + ".]"
	}
	return res
}

func (t *Tool) run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil || args == nil {
		return engine.Errorf("The arguments of %s must be a JSON object.", t.name)
	}
	if refused := t.ask(ctx, call); refused != nil {
		return *refused
	}
	if err := t.conn.Err(); err != nil {
		return engine.Errorf("The MCP server %s is not running (%v), so %s cannot be called.", t.conn.server.Name, err, t.name)
	}
	callCtx, cancel := context.WithTimeout(ctx, t.conn.opts.CallTimeout)
	defer cancel()
	res, err := t.conn.session.CallTool(callCtx, &sdk.CallToolParams{Name: t.def.Name, Arguments: json.RawMessage(call.Args)})
	var refused *jsonrpc.Error // the server's own answer
	transport := err != nil && ctx.Err() == nil && callCtx.Err() == nil && !errors.As(err, &refused)
	if transport {
		// The server may have just died: then Err says how.
		t.conn.settle()
	}
	switch {
	case ctx.Err() != nil:
		return engine.Errorf("%s was cancelled.", t.name)
	case callCtx.Err() != nil:
		return engine.Errorf("The MCP server %s did not answer %s within %s; the call was abandoned.", t.conn.server.Name, t.name, t.conn.opts.CallTimeout)
	case transport && t.conn.Err() != nil:
		return engine.Errorf("The MCP server %s stopped during the %s call (%v).", t.conn.server.Name, t.name, t.conn.Err())
	case refused != nil:
		return engine.Errorf("The MCP server %s refused the %s call: %s", t.conn.server.Name, t.name, refused.Message)
	case err != nil:
		return engine.Errorf("The %s call to the MCP server %s failed: %v", t.name, t.conn.server.Name, err)
	}
	out := resultText(res)
	return engine.ToolResult{Output: out, IsError: res.IsError, Sources: sources(call.Args, res, out)}
}

// maxPathArgs bounds the arguments a call's sources take as paths.
const maxPathArgs = 32

// sources are what a result may carry of the user's files, for the taint
// gate, which keeps the private ones: the result, as content of each path
// the call's arguments may name (a filesystem server's read_text_file
// {path}: the server's reading is invisible to coda), and each embedded
// resource's text, as its URI's.
func sources(args json.RawMessage, res *sdk.CallToolResult, output string) []taint.Source {
	var out []taint.Source
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(out) < maxPathArgs && v != "" && len(v) <= 4096 && !strings.ContainsAny(v, "\n\x00") {
				out = append(out, taint.Source{Path: v, Text: output})
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(args, &v) == nil {
		walk(v)
	}
	for _, c := range res.Content {
		if e, ok := c.(*sdk.EmbeddedResource); ok && e.Resource != nil && e.Resource.Blob == nil {
			if p := fileuri.Path(e.Resource.URI); p != "" {
				out = append(out, taint.Source{Path: p, Text: e.Resource.Text})
			}
		}
	}
	return out
}

// ask requests the user's permission for the call; "allow always" holds for
// this tool for the rest of the session. It returns nil when the call may
// go ahead, else the result the model gets.
func (t *Tool) ask(ctx context.Context, call *engine.Call) *engine.ToolResult {
	title, _ := t.Title(call.Args)
	return engine.Ask(ctx, call, engine.PermissionRequest{
		Key:      t.name,
		ToolCall: engine.ToolCallEvent{Title: title, Kind: t.Kind()},
	}, "it was not called", "")
}

// maxOutput caps what of a result the model is sent.
const maxOutput = 64 << 10

// resultText is a call's result as the model reads it: the text content
// joined, other content named, the structured content when there is
// nothing else; cut at maxOutput.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %s]", c.MIMEType, bytesize.Format(len(c.Data))))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %s]", c.MIMEType, bytesize.Format(len(c.Data))))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s]", c.URI))
		case *sdk.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return cut(strings.Join(parts, "\n"))
}

// embedded is a resource the server put in its result: its text, or a
// name for a blob.
func embedded(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource]"
	case r.Blob == nil:
		return fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, r.Text)
	}
	return fmt.Sprintf("[resource %s, %s, %s]", r.URI, r.MIMEType, bytesize.Format(len(r.Blob)))
}

// cut keeps the first maxOutput bytes of s, at a character boundary,
// saying how much was left out.
func cut(s string) string {
	if len(s) <= maxOutput {
		return s
	}
	head := textcut.At(s, maxOutput)
	return head + fmt.Sprintf("\n[… %d more bytes of the result cut]", len(s)-len(head))
}
