package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp"
)

// asker answers every question with its reply, and keeps what it was
// asked.
type asker struct {
	can   bool
	asked []engine.Question
	reply engine.Reply
}

func (a *asker) CanAsk() bool { return a.can }

func (a *asker) Ask(_ context.Context, q engine.Question) (engine.Reply, error) {
	a.asked = append(a.asked, q)
	return a.reply, nil
}

// A server that elicits during a tool call has its question forwarded to
// the user (Options.Asker), its message and form as it sent them, and gets
// the user's answer; coda advertises elicitation only when the user can be
// asked, so without an Asker the server learns it cannot ask.
func TestStart_elicitationForwarded(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "poll"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "choose"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if caps := req.Session.InitializeParams().Capabilities; caps == nil || caps.Elicitation == nil {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no elicitation"}}}, nil, nil
		}
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Pick a colour", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"colour": map[string]any{"type": "string"}}, "required": []string{"colour"},
		}})
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + res.Content["colour"].(string)}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()

	a := &asker{can: true, reply: engine.Reply{Action: engine.ReplyAccept, Content: map[string]any{"colour": "teal"}}}
	c, err := mcp.Start(context.Background(), mcp.Server{Name: "poll", URL: ts.URL}, mcp.Options{Asker: a})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()
	res := call(context.Background(), tools(c)["poll__choose"], approving(t, nil), `{}`, nil)
	if res.IsError || !strings.Contains(res.Output, "accept teal") {
		t.Errorf("the call: %+v; want the user's answer back through the server", res)
	}
	if !strings.Contains(res.Output, `[During this call the MCP server poll asked the user through coda: it asked the user "Pick a colour"; the user answered {"colour":"teal"}.]`) {
		t.Errorf("the call's result (what the run's record keeps) does not say what was asked: %q", res.Output)
	}
	if len(a.asked) != 1 || !strings.Contains(a.asked[0].Message, "Pick a colour") || !strings.Contains(string(a.asked[0].Fields), `"colour"`) {
		t.Errorf("asked %+v", a.asked)
	}

	for _, no := range []engine.Asker{nil, &asker{}} {
		c, err := mcp.Start(context.Background(), mcp.Server{Name: "poll", URL: ts.URL}, mcp.Options{Asker: no})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		res := call(context.Background(), tools(c)["poll__choose"], approving(t, nil), `{}`, nil)
		c.Close()
		if !strings.Contains(res.Output, "no elicitation") {
			t.Errorf("without anyone to ask (%v): %+v; want elicitation not advertised", no, res)
		}
	}
}
