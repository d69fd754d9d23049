package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/internal/telemetry"
)

// span is a telemetry.Span with a fixed trace context.
type span struct{ traceparent, tracestate string }

func (span) KeepsContent() bool              { return false }
func (span) Content(telemetry.Key, string)   {}
func (span) Usage(telemetry.Usage)           {}
func (span) Finish(string)                   {}
func (span) End(error)                       {}
func (s span) Traceparent() (string, string) { return s.traceparent, s.tracestate }

// A tool call made in a span sends the span's trace context to an HTTP
// server (W3C traceparent and tracestate headers); what coda sends outside
// a span (the start, the listing) carries none.
func TestTool_httpTraceparent(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var mu sync.Mutex
	seen := map[string][]string{} // the JSON-RPC method's traceparents
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request is noted before it is served: the client may have
		// its answer, and the test its look at seen, before ServeHTTP
		// returns.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		method := "other"
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			method = "tools/call"
		}
		mu.Lock()
		seen[method] = append(seen[method], r.Header.Get("traceparent")+" "+r.Header.Get("tracestate"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := mcp.Start(context.Background(), mcp.Server{Name: "web", URL: ts.URL}, mcp.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := telemetry.ContextWith(context.Background(), span{tp, "coda=1"})
	if res := call(ctx, tools(c)["web__echo"], approving(t, nil), `{}`, nil); res.IsError {
		t.Fatalf("echo: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls := seen["tools/call"]; len(calls) != 1 || calls[0] != tp+" coda=1" {
		t.Errorf("tools/call's trace context: %q", calls)
	}
	for _, other := range seen["other"] {
		if other != " " {
			t.Errorf("a request outside the call's span carries %q", other)
		}
	}
}
