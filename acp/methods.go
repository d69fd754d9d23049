package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
)

// methods is the ACP method table: every method coda serves, one entry
// each, with its params type, its result type and its handler. Decoding the
// params, refusing a missing or wrong-typed field (-32602, naming it) and
// answering happen here, once: a handler takes its params decoded and
// checked, and returns its typed result or an error that maps to a
// JSON-RPC code (codeOf). The result types are in protocol.go; the harness
// (methods_test.go) checks each against the ACP schema's definition.
//
// Every message is handled in wire order on the read loop; a handler that
// must wait (a prompt's turn, a close that waits for it, a load reading
// its file: aside) keeps its request (request.keep) and answers it from a
// goroutine.
//
// It is set in init: a handler can reach the table again (a session's
// queued messages are dispatched through it, order.go).
var methods map[string]*method

func init() {
	methods = table(
		call("initialize", (*Server).initialize),
		call("authenticate", (*Server).authenticate),
		call("session/new", (*Server).newSession),
		call("session/load", (*Server).loadSession),
		call("session/resume", (*Server).resumeSession),
		optionalParams(call("session/list", (*Server).listSessions)),
		call("session/set_config_option", (*Server).setConfigOption),
		call("session/set_mode", (*Server).setMode),
		call("session/prompt", (*Server).prompt),
		call("session/close", (*Server).closeSession),
		call("session/delete", (*Server).deleteSession),
		call("session/fork", (*Server).forkSession),
		notification("session/cancel", (*Server).cancelSession),
		notification("$/cancel_request", (*Server).cancelRequest),
	)
}

// A method is one entry of the table.
type method struct {
	name string
	// params and result are the entry's types (result nil for a
	// notification): what the harness checks against the schema.
	params, result reflect.Type
	notification   bool
	// optional: the params may be left out (they decode as zero).
	optional bool
	// serve decodes a message's params, runs the handler and answers;
	// id is nil for a notification; queued says the message is handled
	// from its session's queue, off the read loop (order.go).
	serve func(ctx context.Context, s *Server, m *method, queued bool, id, params json.RawMessage)
}

// table indexes the entries by name.
func table(entries ...method) map[string]*method {
	t := make(map[string]*method, len(entries))
	for i := range entries {
		m := &entries[i]
		if t[m.name] != nil {
			panic("acp: method " + m.name + " is in the table twice")
		}
		t[m.name] = m
	}
	return t
}

// call is the entry of a request: its handler gets the request and its
// params, and returns the result, an error, or — having kept the request
// to answer later — neither.
func call[P, R any](name string, handle func(*Server, *request[R], *P) (*R, error)) method {
	fields := requiredFields(reflect.TypeFor[P]())
	return method{
		name: name, params: reflect.TypeFor[P](), result: reflect.TypeFor[R](),
		serve: func(ctx context.Context, s *Server, m *method, queued bool, id, raw json.RawMessage) {
			r := &request[R]{s: s, method: name, id: id, ctx: ctx, queued: queued}
			p, err := decodeParams[P](m, raw, fields)
			var res *R
			if err == nil {
				res, err = handle(s, r, p)
			}
			switch {
			case err != nil:
				s.replyErr(id, name, err)
			case r.kept:
				if res != nil {
					s.log.Error("a handler both kept its request and answered it", "method", name)
				}
			case res == nil:
				s.log.Error("a handler neither answered its request nor kept it", "method", name)
				s.replyError(id, codeInternalError, "internal error handling "+name, nil)
			default:
				s.reply(id, res)
				if r.after != nil {
					r.after()
				}
			}
		},
	}
}

// notification is the entry of a notification: nothing is answered, and
// params that cannot be read are logged and dropped.
func notification[P any](name string, handle func(*Server, *P)) method {
	fields := requiredFields(reflect.TypeFor[P]())
	return method{
		name: name, params: reflect.TypeFor[P](), notification: true,
		serve: func(_ context.Context, s *Server, m *method, _ bool, _, raw json.RawMessage) {
			p, err := decodeParams[P](m, raw, fields)
			if err != nil {
				s.log.Warn("ignoring a notification coda cannot read", "method", name, "err", err)
				return
			}
			handle(s, p)
		},
	}
}

// optionalParams lets a request leave its params out.
func optionalParams(m method) method {
	m.optional = true
	return m
}

// A request is a request being handled, typed by its result.
type request[R any] struct {
	s      *Server
	method string
	id     json.RawMessage // as the client sent it
	kept   bool
	after  func()
	// ctx is what the handler runs under: on the read loop, the
	// connection's (conn.turns); from a session's queue, that work's.
	ctx context.Context
	// queued: the request is handled off the read loop, by work that
	// owes an answer already (a session's queue, order.go; a queued
	// prompt, queue.go).
	queued bool
	// got, set by the package's tests, takes a kept request's answer
	// instead of the client.
	got func(*R, error)
	// dequeued: a prompt that waited for its session's turn, started now
	// (queue.go).
	dequeued bool
}

// then runs f once the result is written: what the client should hear
// only after the answer (a new session's commands).
func (r *request[R]) then(f func()) { r.after = f }

// begin owes the request's answer to a goroutine (conn.begin). Handled
// from a session's queue, the queue's own work holds the connection open:
// a message read before stdin ended is still handled as the read loop
// would have handled it.
func (r *request[R]) begin() (context.Context, context.CancelFunc, error) {
	if r.queued {
		return r.s.conn.beginHeld()
	}
	return r.s.conn.begin()
}

// keep says the handler answers the request later, once, through the
// answer it returns; the table then sends nothing now. The handler
// returns no result.
func (r *request[R]) keep() answer[R] {
	r.kept = true
	return answer[R]{s: r.s, method: r.method, id: r.id, got: r.got}
}

// aside runs work off the read loop and answers r with what it returns
// (session/load, resume and list: reading files whose size is the user's,
// beside other sessions' traffic; session/new reading the files its
// _meta.coda.output names), then runs what work asked to send after the
// answer (r.then). done runs before the answer, whatever work did. The
// answer is owed until it is written, as a prompt's is, and work's ctx
// ends when coda shuts down. A request that must keep its session's
// messages in order uses sessionAside (order.go).
func aside[R any](s *Server, r *request[R], done func(), work func(ctx context.Context) (*R, error)) (*R, error) {
	return asideThen(s, r, done, work, nil)
}

// asideThen is aside, with then run after the answer whatever work did,
// under the same ctx, before the answer stops being owed.
func asideThen[R any](s *Server, r *request[R], done func(), work func(ctx context.Context) (*R, error), then func(ctx context.Context)) (*R, error) {
	ctx, cancel, err := r.begin()
	if err != nil {
		if done != nil {
			done()
		}
		if then != nil {
			then(context.Background())
		}
		return nil, err
	}
	answer := r.keep()
	go func() {
		defer s.conn.end()
		defer cancel()
		var res *R
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("panic handling a message", "method", r.method, "panic", p, "stack", string(debug.Stack()))
					err = fmt.Errorf("internal error handling %s", r.method)
				}
			}()
			res, err = work(ctx)
		}()
		if done != nil {
			done()
		}
		switch {
		case err == nil:
			answer.reply(res)
			if r.after != nil {
				r.after() // what work asked to send after the answer (then)
			}
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			answer.fail(errClosing)
		default:
			answer.fail(err)
		}
		if then != nil {
			then(ctx)
		}
	}()
	return nil, nil
}

// An answer is a kept request, answered from wherever its work ends.
type answer[R any] struct {
	s      *Server
	method string
	id     json.RawMessage
	got    func(*R, error) // request.got
}

// reply answers with a result.
func (a answer[R]) reply(res *R) {
	if a.got != nil {
		a.got(res, nil)
		return
	}
	a.s.reply(a.id, res)
}

// fail answers with err's code and message.
func (a answer[R]) fail(err error) {
	if a.got != nil {
		a.got(nil, err)
		return
	}
	a.s.replyErr(a.id, a.method, err)
}

// failWith answers with an error of the given code and data.
func (a answer[R]) failWith(code int, msg string, data any) {
	if a.got != nil {
		a.got(nil, fmt.Errorf("%d: %s", code, msg))
		return
	}
	a.s.replyError(a.id, code, msg, data)
}

// serve handles one message read: a request (id set) or a notification;
// one that names a session whose request runs off the loop waits for it
// (order.go).
func (s *Server) serve(id json.RawMessage, name string, params json.RawMessage) {
	held, now, refused := s.hold(id, name, params)
	if refused != nil {
		s.replyErr(id, name, refused)
		return
	}
	if held && !now {
		return
	}
	s.dispatch(s.conn.turns, false, id, name, params)
}

// dispatch hands a message to its entry of the table: on the read loop
// (queued false, under the connection's context), or from a session's
// queue (under that work's).
func (s *Server) dispatch(ctx context.Context, queued bool, id json.RawMessage, name string, params json.RawMessage) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic handling a message", "method", name, "panic", p, "stack", string(debug.Stack()))
			if id != nil {
				s.replyError(id, codeInternalError, fmt.Sprintf("internal error handling %s", name), nil)
			}
		}
	}()
	m := methods[name]
	switch {
	case id == nil && (m == nil || !m.notification):
		s.log.Debug("ignoring notification", "method", name)
	case m == nil:
		s.replyErr(id, name, fmt.Errorf("%w: %s", ErrMethodNotFound, name))
	case m.notification && id != nil:
		s.replyErr(id, name, fmt.Errorf("%w: %s is a notification: send it without an id", ErrInvalidParams, name))
	default:
		m.serve(ctx, s, m, queued, id, params)
	}
}

// replyErr answers a request with err's code; an internal error is logged
// with its chain.
func (s *Server) replyErr(id json.RawMessage, method string, err error) {
	code := codeOf(err)
	if code == codeInternalError {
		s.log.Error("request failed", "method", method, "err", err)
	}
	s.replyError(id, code, err.Error(), nil)
}

// decodeParams decodes a message's params into a P; a failure names the
// field. fields are P's required ones (requiredFields).
func decodeParams[P any](m *method, raw json.RawMessage, fields []requiredField) (*P, error) {
	p := new(P)
	if isNull(raw) {
		if m.optional {
			return p, nil
		}
		return nil, fmt.Errorf("%w: %s needs params", ErrInvalidParams, m.name)
	}
	if err := json.Unmarshal(raw, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%w: %s: expected %s, got %s", ErrInvalidParams, te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	v := reflect.ValueOf(p).Elem()
	for _, f := range fields {
		if v.Field(f.index).IsNil() {
			return nil, missingField(f.name)
		}
	}
	return p, nil
}

// A requiredField is a params field tagged `acp:"required"`: it must be
// there and not null. Such a field is a pointer, a slice or a map, so that
// a missing one reads as nil.
type requiredField struct {
	index int
	name  string
}

func requiredFields(t reflect.Type) []requiredField {
	var out []requiredField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("acp") != "required" {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
		default:
			panic(fmt.Sprintf("acp: %s.%s is required, so it must be a pointer, slice or map", t.Name(), f.Name))
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, requiredField{i, name})
	}
	return out
}

func missingField(name string) error {
	return fmt.Errorf("%w: %s is required", ErrInvalidParams, name)
}
