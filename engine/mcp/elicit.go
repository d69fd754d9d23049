package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine"
)

// elicitVia forwards a server's elicitation/create to the user through
// asker (DESIGN §22): a form's message and schema as they are; a URL
// elicitation, which coda does not show, is declined. The user's answer,
// or their declining or dismissing it, goes back to the server; a user
// who cannot be asked is the server's error. note keeps what was asked and
// what came of it, for the result of the call it happened in (Tool.Run).
func elicitVia(asker engine.Asker, server string, note func(string)) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		p := req.Params
		if p == nil || p.Mode == "url" || p.URL != "" {
			note("it asked the user to open a page, which coda does not show: declined")
			return &sdk.ElicitResult{Action: engine.ReplyDecline}, nil
		}
		q := engine.Question{Message: fmt.Sprintf("MCP server %s asks: %s", server, p.Message)}
		if p.RequestedSchema != nil {
			b, err := json.Marshal(p.RequestedSchema)
			if err != nil {
				return nil, fmt.Errorf("its requested schema: %w", err)
			}
			q.Fields = b
		}
		reply, err := asker.Ask(ctx, q)
		if err != nil {
			note(fmt.Sprintf("it asked the user %q, who could not be asked (%v)", p.Message, err))
			return nil, err
		}
		what := map[string]string{engine.ReplyAccept: "answered", engine.ReplyDecline: "declined"}[reply.Action]
		if what == "" {
			what = "dismissed it"
		}
		if reply.Action == engine.ReplyAccept {
			b, _ := json.Marshal(reply.Content)
			what += " " + string(b)
		}
		note(fmt.Sprintf("it asked the user %q; the user %s", p.Message, what))
		return &sdk.ElicitResult{Action: reply.Action, Content: reply.Content}, nil
	}
}
