package acp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/outputspec"
	statestore "github.com/coda-acp/coda/store"
)

// Options configure a Server. The zero value of every optional field works.
type Options struct {
	Agent *blueprint.Blueprint // required
	// Launch is the launch level of the output cascade (the --output-*
	// flags); it may be empty.
	Launch outputspec.Spec
	// LaunchDir resolves relative paths in Launch (the working directory).
	LaunchDir string

	// Engine runs the turns (required). Its models, tools, record store,
	// ids (session ids "s" too), call cap, taint settings and model facts
	// are the server's; its log is where the server logs as well.
	Engine *engine.Engine

	// UserModel is --model: the model of stages that take the user's
	// model, until a session picks its own.
	UserModel string
	// UserEffort is --effort: the reasoning effort of stages that take the
	// user's model, until a session picks its own (effort.go).
	UserEffort string
	Version    string
	// DrainTimeout bounds how long in-flight turns may run after stdin
	// closes before they are cancelled (default 30s).
	DrainTimeout time.Duration
	// EditorTimeout bounds each call coda makes to the editor for files
	// and terminals (fs/*, terminal/create, output, kill, release), so a
	// silent editor cannot hang a turn (default 60s). A permission request
	// waits for the user as long as the turn runs; terminal/wait_for_exit,
	// as long as the command's own timeout.
	EditorTimeout time.Duration
	// MaxMessageBytes is the longest line read from the client (default
	// DefaultMaxMessageBytes, 64 MiB). A longer one is answered -32600
	// without being held whole, and the connection goes on.
	MaxMessageBytes int
	// Trace logs every message read and written, whole, at debug level.
	Trace bool
	// Commentary is how the text of a turn that is not its answer streams
	// for an agent that answers (DESIGN §8): CommentaryThought ("" too) as
	// agent_thought_chunk, so that the answer is the turn's only message;
	// CommentaryMessage as agent_message_chunk, as coda once did. A
	// session's _meta.coda.commentary wins over it.
	Commentary string

	// Models answers what acp asks of the models beyond the launch's: the
	// default, the picker's list, efforts, whether a model can be used
	// (models.go). Nil knows none.
	Models Models

	// MCPStartWait bounds how long a prompt waits for its session's MCP
	// servers still starting (default 10s); MCPStartTimeout how long a
	// server may take to start (default 2 minutes); MCPCallTimeout each
	// call of an MCP tool (default 2 minutes).
	MCPStartWait    time.Duration
	MCPStartTimeout time.Duration
	MCPCallTimeout  time.Duration
}

// log is where the server logs: the engine's log, or nowhere.
func (o *Options) log() *slog.Logger {
	if o.Engine == nil || o.Engine.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Engine.Log
}

// Errors mapped to JSON-RPC codes; wrap them with %w.
var (
	ErrInvalidParams  = errors.New("invalid params")
	ErrMethodNotFound = errors.New("method not found")
	// ErrAuthRequired is ACP's -32000: no model can be reached until the
	// user sets what the message names.
	ErrAuthRequired = errors.New("authentication required")
	// ErrNotFound is ACP's -32002, "resource not found": a session coda
	// does not have (never made, closed, deleted).
	ErrNotFound = errors.New("resource not found")
)

// codeOf maps an error to its JSON-RPC code: one table for the transport.
func codeOf(err error) int {
	switch {
	case errors.Is(err, ErrInvalidParams):
		return codeInvalidParams
	case errors.Is(err, ErrMethodNotFound):
		return codeMethodNotFound
	case errors.Is(err, ErrAuthRequired):
		return codeAuthRequired
	case errors.Is(err, ErrNotFound):
		return codeResourceNotFound
	}
	return codeInternalError
}

// A Server serves one ACP connection: the method table and the sessions.
// The connection's life (serving, draining, shutting down) is conn's.
type Server struct {
	opts Options
	log  *slog.Logger
	conn *conn // set by Serve, before the first message is read
	// out are the agent's answer contracts, the launch's and a session's
	// (outputs.go).
	out *outputs
	// pick answers the sessions' pickers (modes.go, acp/pickers).
	pick *pickers.Picker

	// store keeps the sessions' files (the engine's store); nil without a
	// state directory.
	store *statestore.Store

	// prompts are the prompts owed an answer off the read loop: running
	// and queued (queue.go).
	prompts *promptQueue

	mu       sync.Mutex
	sessions map[string]*session
	loading  map[string]*restore // the sessions a load or resume is restoring (load.go)
	// queues hold the messages naming a session whose request runs off
	// the read loop, by session id (order.go).
	queues map[string]*sessionQueue
	// caps are the client's capabilities, from initialize.
	caps capabilities
	// mcp runs the sessions' MCP servers (mcp.go), stopped with the
	// connection.
	mcp *mcp.Host
}

// NewServer checks opts and compiles the launch output contracts.
func NewServer(opts Options) (*Server, error) {
	if opts.Agent == nil || opts.Engine == nil || opts.Engine.Models == nil {
		return nil, errors.New("acp: Options.Agent, Options.Engine and its Models are required")
	}
	if opts.Models == nil {
		opts.Models = noModels{}
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.EditorTimeout <= 0 {
		opts.EditorTimeout = 60 * time.Second
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if err := CheckCommentary(opts.Commentary); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.log(), sessions: map[string]*session{}, loading: map[string]*restore{}, queues: map[string]*sessionQueue{}}
	s.mcp = mcp.NewHost(mcp.Options{
		Log: s.log, Version: opts.Version,
		StartTimeout: opts.MCPStartTimeout, CallTimeout: opts.MCPCallTimeout, StartWait: opts.MCPStartWait,
	})
	s.store = opts.Engine.Store
	out, err := newOutputs(opts.Agent, outputspec.Level{Dir: opts.LaunchDir, Spec: opts.Launch}, opts.Engine.Taint, s.log)
	if err != nil {
		return nil, err
	}
	s.out = out
	s.prompts = newPromptQueue(s)
	s.pick = pickers.New(opts.Models, opts.UserModel, opts.UserEffort, out.privateFile)
	return s, nil
}

// reply writes a result response; id is as the client sent it.
func (s *Server) reply(id json.RawMessage, result any) {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = appendJSON(b, result)
	b = append(b, '}')
	if err := s.conn.out.writeLine(b); err != nil {
		s.log.Debug("writing a reply", "err", err)
	}
}

// replyError writes an error response, with optional data.
func (s *Server) replyError(id json.RawMessage, code int, msg string, data any) {
	b := appendError(make([]byte, 0, 128+len(msg)), id, code, msg, data)
	if err := s.conn.out.writeLine(b); err != nil {
		s.log.Debug("writing a reply", "err", err)
	}
}

// appendError appends an error response: id is already encoded (nil is
// null), data is left out when nil. Every error coda answers is made here.
func appendError(b, id []byte, code int, msg string, data any) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		id = []byte("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = appendInt(b, int64(code))
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	if data != nil {
		b = append(b, `,"data":`...)
		b = appendJSON(b, data)
	}
	return append(b, "}}"...)
}

// idKey is a map key for a request id: the same for one id however it is
// spelt (a string's escapes, a number's form); false for what is no id.
func idKey(raw json.RawMessage) (string, bool) {
	var v any
	if isNull(raw) || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s:" + v, true
	case float64:
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			if i, err := n.Int64(); err == nil {
				return "n:" + strconv.FormatInt(i, 10), true
			}
		}
	}
	return "", false
}

// idKeyOf is the key of a request's own id, which the line reader has
// checked is one.
func idKeyOf(id json.RawMessage) string {
	key, _ := idKey(id)
	return key
}
