package acp

import (
	"context"
	"encoding/json"

	"github.com/coda-acp/coda/internal/jsonrpc"
)

// methods is the ACP method table: every method coda serves, one entry
// each, with its params type, its result type and its handler
// (jsonrpc.Table decodes, refuses and answers). The result types are in
// protocol.go; the harness (methods_test.go) checks each against the ACP
// schema's definition.
//
// Every message is handled in wire order on the read loop; a handler that
// must wait (a prompt's turn, a close that waits for it, a load reading
// its file: aside) keeps its request (Request.Keep) and answers it from a
// goroutine.
//
// It is set in init: a handler can reach the table again (a session's
// queued messages are dispatched through it, order.go).
var methods jsonrpc.Table[*Server]

func init() {
	methods = jsonrpc.NewTable(
		jsonrpc.OnRequest("initialize", (*Server).initialize),
		jsonrpc.OnRequest("authenticate", (*Server).authenticate),
		jsonrpc.OnRequest("session/new", (*Server).newSession),
		jsonrpc.OnRequest("session/load", ofLoader((*loader).loadSession)),
		jsonrpc.OnRequest("session/resume", ofLoader((*loader).resumeSession)),
		jsonrpc.Optional(jsonrpc.OnRequest("session/list", ofLoader((*loader).listSessions))),
		jsonrpc.OnRequest("session/set_config_option", (*Server).setConfigOption),
		jsonrpc.OnRequest("session/set_mode", (*Server).setMode),
		jsonrpc.OnRequest("session/prompt", (*Server).prompt),
		jsonrpc.OnRequest("session/close", (*Server).closeSession),
		jsonrpc.OnRequest("session/delete", ofLoader((*loader).deleteSession)),
		jsonrpc.OnRequest("session/fork", ofLoader((*loader).forkSession)),
		jsonrpc.OnNotification("session/cancel", (*Server).cancelSession),
		jsonrpc.OnNotification("$/cancel_request", (*Server).cancelRequest),
	)
}

// ofLoader is a handler of the server's loader (load.go), as the table
// takes it.
func ofLoader[P, R any](h func(*loader, context.Context, *request[R], *P) (*R, error)) func(*Server, context.Context, *request[R], *P) (*R, error) {
	return func(s *Server, ctx context.Context, r *request[R], p *P) (*R, error) { return h(s.load, ctx, r, p) }
}

// A request is a request being handled, typed by its result; an answer, a
// kept request answered later.
type (
	request[R any] = jsonrpc.Request[R]
	answer[R any]  = jsonrpc.Answer[R]
)

// aside runs work off the read loop and answers r with what it returns
// (session/load, resume, fork and list: reading files whose size is the
// user's, beside other sessions' traffic; session/new reading the files its
// _meta.coda.output names). done runs before the answer, whatever work
// did. A request that must keep its session's messages in order uses
// sessionAside (order.go).
func aside[R any](ctx context.Context, r *request[R], done func(), work func(ctx context.Context) (*R, error)) (*R, error) {
	return jsonrpc.Aside(ctx, r, done, work, nil)
}

// serve handles one message read: a request (id set) or a notification;
// one that names a session whose request runs off the loop waits for it
// (order.go).
func (s *Server) serve(ctx context.Context, id json.RawMessage, name string, params json.RawMessage) {
	held, now, refused := s.hold(id, name, params)
	if refused != nil {
		s.conn.ReplyErr(id, name, refused)
		return
	}
	if held && !now {
		return
	}
	methods.Dispatch(ctx, s.conn.Loop(), s, id, name, params)
}
