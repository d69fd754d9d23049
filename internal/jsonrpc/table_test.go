package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type echoServer struct{ pinged []string }

type echoParams struct {
	Text *string `json:"text" jsonrpc:"required"`
}

type echoResult struct {
	Text string `json:"text"`
}

func (*echoServer) echo(_ context.Context, _ *Request[echoResult], p *echoParams) (*echoResult, error) {
	if *p.Text == "fail" {
		return nil, NewError(-32002, "resource not found")
	}
	if *p.Text == "boom" {
		return nil, errors.New("boom")
	}
	return &echoResult{Text: *p.Text}, nil
}

// later keeps its request and answers it from a goroutine, after which
// what it asked to send follows.
func (e *echoServer) later(ctx context.Context, r *Request[echoResult], _ *struct{}) (*echoResult, error) {
	r.Then(func() { r.lane.conn().Write([]byte(`{"jsonrpc":"2.0","method":"after"}`)) })
	return Aside(ctx, r, nil, func(context.Context) (*echoResult, error) { return &echoResult{Text: "later"}, nil }, nil)
}

func (e *echoServer) ping(_ context.Context, p *echoParams) { e.pinged = append(e.pinged, *p.Text) }

// The table decodes and refuses params naming the field, answers with
// an error's own code, keeps a request answered later, takes optional
// params, and tells requests from notifications.
func TestTable_Dispatch(t *testing.T) {
	table := NewTable(
		OnRequest("echo", (*echoServer).echo),
		Optional(OnRequest("later", (*echoServer).later)),
		OnNotification("ping", (*echoServer).ping),
	)
	var out strings.Builder
	c := NewConn(Options{}, strings.NewReader(""), &out)
	s := &echoServer{}
	for _, m := range []struct{ id, method, params string }{
		{"1", "echo", `{"text":"hi"}`},
		{"2", "echo", `{}`},
		{"3", "echo", `{"text":7}`},
		{"4", "echo", ``},
		{"5", "echo", `{"text":"fail"}`},
		{"6", "echo", `{"text":"boom"}`},
		{`"x"`, "nope", `{}`},
		{"7", "ping", `{"text":"a"}`},
		{"", "ping", `{"text":"b"}`},
		{"", "echo", `{"text":"ignored"}`},
		{"8", "later", ``},
	} {
		var id json.RawMessage
		if m.id != "" {
			id = json.RawMessage(m.id)
		}
		table.Dispatch(context.Background(), c.Loop(), s, id, m.method, json.RawMessage(m.params))
	}
	c.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: text is required"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: text: expected string, got number"}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: echo needs params"}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"resource not found"}}`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"boom"}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found: nope"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: ping is a notification: send it without an id"}}`,
		`{"jsonrpc":"2.0","id":8,"result":{"text":"later"}}`,
		`{"jsonrpc":"2.0","method":"after"}`,
	}, "\n") + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b"}, s.pinged); diff != "" {
		t.Errorf("notifications handled (-want +got):\n%s", diff)
	}
}

// Off the read loop already (the Held lane), work set aside runs where it
// is, and the connection owes nothing more for it.
func TestAside_held(t *testing.T) {
	c := NewConn(Options{}, strings.NewReader(""), &strings.Builder{})
	defer c.Close()
	r := NewRequest[echoResult](c.Held(), "later", json.RawMessage("1"))
	var got *echoResult
	r.Got = func(res *echoResult, err error) { got = res }
	ran := false
	if _, err := Aside(context.Background(), r, func() { ran = true }, func(context.Context) (*echoResult, error) { return &echoResult{Text: "here"}, nil }, nil); err != nil {
		t.Fatal(err)
	}
	if !ran || got == nil || got.Text != "here" {
		t.Errorf("held aside: done ran %v, answered %v; want both at once", ran, got)
	}
}
