package acp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/coda-acp/coda/acp/contracts"
	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/outputspec"
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

// Errors that answer with their JSON-RPC codes; wrap them with %w.
var (
	ErrInvalidParams  = jsonrpc.ErrInvalidParams
	ErrMethodNotFound = jsonrpc.ErrMethodNotFound
	// ErrAuthRequired is ACP's -32000: no model can be reached until the
	// user sets what the message names.
	ErrAuthRequired = jsonrpc.NewError(-32000, "authentication required")
	// ErrNotFound is ACP's -32002, "resource not found": a session coda
	// does not have (never made, closed, deleted; DESIGN §8).
	ErrNotFound = jsonrpc.NewError(-32002, "resource not found")
)

// DefaultMaxMessageBytes is the longest line coda reads whole when
// Options.MaxMessageBytes is not set.
const DefaultMaxMessageBytes = jsonrpc.DefaultMaxMessageBytes

// A Server serves one ACP connection: the method table and the sessions.
// The connection's life (serving, draining, shutting down) is
// jsonrpc.Conn's.
type Server struct {
	opts Options
	log  *slog.Logger
	conn *jsonrpc.Conn // set by Serve, before the first message is read
	// out are the agent's answer contracts, the launch's and a session's
	// (acp/contracts).
	out *contracts.Contracts
	// pick answers the sessions' pickers (modes.go, acp/pickers).
	pick *pickers.Picker

	// load owns the sessions that outlive coda: their files, the
	// sessions being restored, and the methods on them (load.go).
	load *loader

	// prompts are the prompts owed an answer off the read loop: running
	// and queued (queue.go).
	prompts *promptQueue

	mu       sync.Mutex
	sessions map[string]*session // the open sessions; mu guards load.loading too
	// order holds the messages naming a session whose request runs off
	// the read loop, by session id (order.go).
	order jsonrpc.Order
	// caps are the client's capabilities, from initialize.
	caps editor.Capabilities
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
	s := &Server{opts: opts, log: opts.log(), sessions: map[string]*session{}}
	s.mcp = mcp.NewHost(mcp.Options{
		Log: s.log, Version: opts.Version,
		StartTimeout: opts.MCPStartTimeout, CallTimeout: opts.MCPCallTimeout, StartWait: opts.MCPStartWait,
	})
	s.load = newLoader(s, opts.Engine.Store)
	out, err := contracts.New(opts.Agent, outputspec.Level{Dir: opts.LaunchDir, Spec: opts.Launch}, opts.Engine.Taint, s.log)
	if err != nil {
		return nil, err
	}
	s.out = out
	s.prompts = newPromptQueue(s)
	s.pick = pickers.New(opts.Models, opts.UserModel, opts.UserEffort, out.PrivateFile)
	return s, nil
}

// Serve serves one ACP connection on in and out. It returns when the
// connection is over (in ended, or ctx is done because coda was signalled)
// and every prompt read has been answered and the output flushed; the error
// is the output's, if writing failed. A Server serves one connection.
//
// When ctx ends first, in may still be open: reading it goes on in the
// background until it ends, but nothing read is answered any more.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.conn = s.newConn(in, out)
	err := s.conn.Serve(ctx, s.serve)
	// Then stop the sessions' MCP servers: every turn that could call
	// them has answered; and the providers' listing, if it still runs.
	s.mcp.Close()
	s.pick.Listing.Stop()
	// The index's lines of the last turns' appends are written.
	s.load.store.Flush()
	return err
}

// newConn is the JSON-RPC connection on in and out, as opts configure it.
func (s *Server) newConn(in io.Reader, out io.Writer) *jsonrpc.Conn {
	return jsonrpc.NewConn(jsonrpc.Options{Log: s.log, MaxMessageBytes: s.opts.MaxMessageBytes, DrainTimeout: s.opts.DrainTimeout, Trace: s.opts.Trace}, in, out)
}
