package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/internal/jsonrpc"
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

	UserModel    string
	DefaultModel string
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

	// Models beyond the launch's (auth.go, modes.go).

	// FindDefault, when DefaultModel is "", looks for one (a local Ollama
	// that answers); "" when there is none. With wait false it answers at
	// once, "" while it is still looking; with wait it may take a moment,
	// so acp waits only in a turn's goroutine or in authenticate (auth.go).
	FindDefault func(wait bool) string
	// PickerModels are more models the model option offers (config.toml's
	// [picker] models), after the launch's.
	PickerModels []string
	// Discover lists the models the providers offer, for the model option
	// after PickerModels (listed.go): asked once, in the background, when
	// the first session starts, and kept for the process; ctx ends when
	// Serve does. Nil lists none ([picker] discover = false).
	Discover func(ctx context.Context) []ListedModel
	// Efforts says which reasoning effort levels the model spec names
	// takes, in order, and the level it is given when the session picks
	// none (--effort, else the config's; "" leaves it to the model). Nil
	// offers no effort option.
	Efforts func(spec string) (takes []string, launch string)
	// CheckModel says whether a model spec can be used: nil, an error
	// wrapping ErrAuthRequired when its key is not set (the message names
	// the variable), or another error when the spec itself is wrong. Nil
	// takes every PROVIDER:MODEL.
	CheckModel func(spec string) error
	// Reach says why a turn could not reach a model when the user's model
	// is userModel and the default defaultModel, or nil when it can: the
	// message says what to set. Nil takes every turn as reachable.
	Reach func(userModel, defaultModel string) error

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
	// launchOutputs are the contracts at launch: advertised in initialize.
	launchOutputs *blueprint.Outputs
	launchLevel   *outputspec.Level
	// launchNamesFiles: the launch's spec or the agent's outputs name a
	// schema file or validator, read at every compile (compileReadsFiles).
	launchNamesFiles bool

	// store keeps the sessions' files (the engine's store); nil without a
	// state directory.
	store *statestore.Store

	mu       sync.Mutex
	sessions map[string]*session
	prompts  map[string]*session // a running prompt's request id → its session
	loading  map[string]*restore // the sessions a load or resume is restoring (load.go)
	// order holds the messages naming a session whose request runs off
	// the read loop, by session id (order.go).
	order      jsonrpc.Order
	clientCaps json.RawMessage
	// mcp runs the sessions' MCP servers (mcp.go), stopped with the
	// connection.
	mcp *mcp.Host
	// listing is the providers' model list (listed.go).
	listing *listing
}

// NewServer checks opts and compiles the launch output contracts.
func NewServer(opts Options) (*Server, error) {
	if opts.Agent == nil || opts.Engine == nil || opts.Engine.Models == nil {
		return nil, errors.New("acp: Options.Agent, Options.Engine and its Models are required")
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
	s := &Server{opts: opts, log: opts.log(), sessions: map[string]*session{}, prompts: map[string]*session{}, loading: map[string]*restore{}, listing: newListing()}
	s.mcp = mcp.NewHost(mcp.Options{
		Log: s.log, Version: opts.Version,
		StartTimeout: opts.MCPStartTimeout, CallTimeout: opts.MCPCallTimeout, StartWait: opts.MCPStartWait,
	})
	s.store = opts.Engine.Store
	s.launchLevel = &outputspec.Level{Dir: opts.LaunchDir, Spec: opts.Launch}
	outs, err := blueprint.CompileOutputs(opts.Agent, outputspec.Levels{Launch: s.launchLevel})
	if err != nil {
		return nil, err
	}
	for _, w := range outs.Warnings {
		s.log.Warn(w)
	}
	s.launchOutputs = outs
	s.launchNamesFiles = namesFilesAtLaunch(opts.Launch, opts.Agent)
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
	s.stopListing()
	// The index's lines of the last turns' appends are written.
	s.store.Flush()
	return err
}

// newConn is the JSON-RPC connection on in and out, as opts configure it.
func (s *Server) newConn(in io.Reader, out io.Writer) *jsonrpc.Conn {
	return jsonrpc.NewConn(jsonrpc.Options{Log: s.log, MaxMessageBytes: s.opts.MaxMessageBytes, DrainTimeout: s.opts.DrainTimeout, Trace: s.opts.Trace}, in, out)
}
