package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
)

// A Table is a server's methods, one entry each, with its params type,
// its result type and its handler, as the MCP Go SDK's mcp/shared.go does
// it; S is the server the handlers are methods of. Decoding the params,
// refusing a missing or wrong-typed field (-32602, naming it) and
// answering happen here, once: a handler takes its params decoded and
// checked, and returns its typed result or an error whose code CodeOf
// reads.
type Table[S any] map[string]*Method[S]

// A Method is one entry of a Table.
type Method[S any] struct {
	Name string
	// Params and Result are the entry's types; Result is nil for a
	// notification.
	Params, Result reflect.Type
	// Optional: the params may be left out (they decode as zero).
	Optional bool
	// serve decodes a message's params, runs the handler and answers; id
	// is nil for a notification.
	serve func(ctx context.Context, lane Lane, s S, m *Method[S], id, params json.RawMessage)
}

// NewTable indexes the entries by name.
func NewTable[S any](entries ...Method[S]) Table[S] {
	t := make(Table[S], len(entries))
	for i := range entries {
		m := &entries[i]
		if t[m.Name] != nil {
			panic("jsonrpc: method " + m.Name + " is in the table twice")
		}
		t[m.Name] = m
	}
	return t
}

// OnRequest is the entry of a request: its handler gets the request and
// its params, and returns the result, an error, or — having kept the
// request to answer later (Request.Keep) — neither.
func OnRequest[S, P, R any](name string, handle func(S, context.Context, *Request[R], *P) (*R, error)) Method[S] {
	requiredFields(reflect.TypeFor[P]()) // checked, and kept, as the table is made
	return Method[S]{
		Name: name, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
		serve: func(ctx context.Context, lane Lane, s S, m *Method[S], id, raw json.RawMessage) {
			c := lane.conn()
			r := NewRequest[R](lane, name, id)
			p, err := decode[P](m, raw)
			var res *R
			if err == nil {
				res, err = handle(s, ctx, r, p)
			}
			switch {
			case err != nil:
				c.ReplyErr(id, name, err)
			case r.kept:
				if res != nil {
					c.log.Error("a handler both kept its request and answered it", "method", name)
				}
			case res == nil:
				c.log.Error("a handler neither answered its request nor kept it", "method", name)
				c.ReplyError(id, CodeInternalError, "internal error handling "+name, nil)
			default:
				c.Reply(id, res)
				r.Answered()
			}
		},
	}
}

// OnNotification is the entry of a notification: nothing is answered,
// and params that cannot be read are logged and dropped.
func OnNotification[S, P any](name string, handle func(S, context.Context, *P)) Method[S] {
	requiredFields(reflect.TypeFor[P]())
	return Method[S]{
		Name: name, Params: reflect.TypeFor[P](),
		serve: func(ctx context.Context, lane Lane, s S, m *Method[S], _, raw json.RawMessage) {
			p, err := decode[P](m, raw)
			if err != nil {
				lane.conn().log.Warn("ignoring a notification coda cannot read", "method", name, "err", err)
				return
			}
			handle(s, ctx, p)
		},
	}
}

// Optional lets a request leave its params out.
func Optional[S any](m Method[S]) Method[S] {
	m.Optional = true
	return m
}

// Dispatch hands a message to its entry, on lane, under ctx: a request
// (id set) or a notification. A notification coda does not know is
// ignored, as is a request sent without an id; a notification sent with
// an id is refused -32602. A panic is logged and answered -32603.
func (t Table[S]) Dispatch(ctx context.Context, lane Lane, s S, id json.RawMessage, name string, params json.RawMessage) {
	c := lane.conn()
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("panic handling a message", "method", name, "panic", p, "stack", string(debug.Stack()))
			if id != nil {
				c.ReplyError(id, CodeInternalError, fmt.Sprintf("internal error handling %s", name), nil)
			}
		}
	}()
	m := t[name]
	notification := m != nil && m.Result == nil
	switch {
	case id == nil && !notification:
		c.log.Debug("ignoring notification", "method", name)
	case m == nil:
		c.ReplyErr(id, name, fmt.Errorf("%w: %s", ErrMethodNotFound, name))
	case notification && id != nil:
		c.ReplyErr(id, name, fmt.Errorf("%w: %s is a notification: send it without an id", ErrInvalidParams, name))
	default:
		m.serve(ctx, lane, s, m, id, params)
	}
}

// A Request is a request being handled, typed by its result.
type Request[R any] struct {
	lane   Lane
	method string
	id     json.RawMessage // as the client sent it
	kept   bool
	after  func()
	// Got, set by a test that calls a handler itself, takes a kept
	// request's answer instead of the client.
	Got func(*R, error)
}

// NewRequest is a request handled on lane: the table makes one for each
// request read; a prompt that waited for its session's turn, when it
// starts.
func NewRequest[R any](lane Lane, method string, id json.RawMessage) *Request[R] {
	return &Request[R]{lane: lane, method: method, id: id}
}

// ID is the request's id, as the client sent it.
func (r *Request[R]) ID() json.RawMessage { return r.id }

// Method is the request's method.
func (r *Request[R]) Method() string { return r.method }

// Then runs f once the result is written: what the client should hear
// only after the answer (a new session's commands).
func (r *Request[R]) Then(f func()) { r.after = f }

// Answered runs what Then asked, once the result is written.
func (r *Request[R]) Answered() {
	if r.after != nil {
		r.after()
	}
}

// Begin owes the request's answer to a goroutine, as its lane does it
// (Lane), and returns the context that goroutine runs under.
func (r *Request[R]) Begin() (context.Context, context.CancelFunc, error) { return r.lane.begin() }

// Keep says the handler answers the request later, once, through the
// answer it returns; the table then sends nothing now. The handler
// returns no result.
func (r *Request[R]) Keep() Answer[R] {
	r.kept = true
	return Answer[R]{conn: r.lane.conn(), method: r.method, id: r.id, got: r.Got}
}

// Kept reports whether the handler kept the request (Keep).
func (r *Request[R]) Kept() bool { return r.kept }

// An Answer is a kept request, answered from wherever its work ends.
type Answer[R any] struct {
	conn   *Conn
	method string
	id     json.RawMessage
	got    func(*R, error) // Request.Got
}

// Reply answers with a result.
func (a Answer[R]) Reply(res *R) {
	if a.got != nil {
		a.got(res, nil)
		return
	}
	a.conn.Reply(a.id, res)
}

// Fail answers with err's code and message.
func (a Answer[R]) Fail(err error) {
	if a.got != nil {
		a.got(nil, err)
		return
	}
	a.conn.ReplyErr(a.id, a.method, err)
}

// FailWith answers with an error of the given code and data.
func (a Answer[R]) FailWith(code int, msg string, data any) {
	if a.got != nil {
		a.got(nil, fmt.Errorf("%d: %s", code, msg))
		return
	}
	a.conn.ReplyError(a.id, code, msg, data)
}

// decode decodes an entry's params; left out, they are zero when the
// entry's are optional.
func decode[P, S any](m *Method[S], raw json.RawMessage) (*P, error) {
	if m.Optional && IsNull(raw) {
		return new(P), nil
	}
	return Params[P](m.Name, raw)
}

// Params decodes a request's params into a P, as the table does: missing
// params, a field of the wrong type and a required field (tagged
// `jsonrpc:"required"`) missing or null are refused ErrInvalidParams,
// naming the field.
func Params[P any](method string, raw json.RawMessage) (*P, error) {
	p := new(P)
	if IsNull(raw) {
		return nil, fmt.Errorf("%w: %s needs params", ErrInvalidParams, method)
	}
	if err := json.Unmarshal(raw, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%w: %s: expected %s, got %s", ErrInvalidParams, te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	v := reflect.ValueOf(p).Elem()
	for _, f := range requiredFields(v.Type()) {
		if v.Field(f.index).IsNil() {
			return nil, missingField(f.name)
		}
	}
	return p, nil
}

// A requiredField is a params field tagged `jsonrpc:"required"`: it must
// be there and not null. Such a field is a pointer, a slice or a map, so
// that a missing one reads as nil.
type requiredField struct {
	index int
	name  string
}

// requiredFields are t's required fields, found once a type.
func requiredFields(t reflect.Type) []requiredField {
	if f, ok := required.Load(t); ok {
		return f.([]requiredField)
	}
	var out []requiredField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("jsonrpc") != "required" {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
		default:
			panic(fmt.Sprintf("jsonrpc: %s.%s is required, so it must be a pointer, slice or map", t.Name(), f.Name))
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, requiredField{i, name})
	}
	required.Store(t, out)
	return out
}

var required sync.Map // reflect.Type → []requiredField

// missingField is the error of a required field left out.
func missingField(name string) error {
	return fmt.Errorf("%w: %s is required", ErrInvalidParams, name)
}
