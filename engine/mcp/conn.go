// Package mcp runs the MCP servers an editor hands a session (stdio and
// streamable HTTP, through the official MCP Go SDK), from their start in
// the background to their stop with the session or the connection, and
// offers their tools as engine.Tools: named SERVER__TOOL for the model,
// asking the user before each call, bounded by a timeout and cancelled with
// the turn, their results fed back as text. The protocol that hands the
// servers over (ACP's mcpServers) is acp's; this package knows nothing of
// it.
//
// Where each rule lives: host.go (a session's servers: started in the
// background, waited for by a turn, their warnings, stopped with the session
// or the connection), conn.go (starting a server, listing its tools,
// noticing it end, stopping it), process.go (a stdio server's process: its
// environment, its stderr, no orphans), names.go (the names the model
// sees), tool.go (a call: permission, timeout, the result as text, and
// what it may carry of private files).
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/telemetry"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Server is one MCP server as the editor gives it: a command to run
// (stdio), or a URL (streamable HTTP).
type Server struct {
	Name string

	// stdio
	Command string
	Args    []string
	Env     []string // NAME=VALUE, over the few variables a server inherits (process.go)
	Dir     string   // the working directory: the session's

	// streamable HTTP
	URL     string
	Headers http.Header
}

// Options configure how servers are started and called. The zero value
// works.
type Options struct {
	Log     *slog.Logger
	Version string // coda's, told to the server
	// StartTimeout bounds starting a server and listing its tools (default
	// 2 minutes: npx may first download the server).
	StartTimeout time.Duration
	// CallTimeout bounds each tool call (default 2 minutes).
	CallTimeout time.Duration
	// StartWait bounds how long a turn waits for its session's servers
	// still starting (Set.Turn; default DefaultStartWait, 10s).
	StartWait time.Duration
	// Asker, when it can ask, is who a server's elicitation/create (form
	// mode) is forwarded to (DESIGN §22): coda then advertises elicitation
	// to the server, and only then (elicit.go). A session's set has its
	// own (Host.Start).
	Asker engine.Asker
}

// Defaults of Options.
const (
	DefaultStartTimeout = 2 * time.Minute
	DefaultCallTimeout  = 2 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StartWait <= 0 {
		o.StartWait = DefaultStartWait
	}
	return o
}

// A Conn is a started server: its session and its tools, listed when it
// started and again whenever it says they changed (tools/list_changed).
type Conn struct {
	server  Server
	opts    Options
	session *sdk.ClientSession
	proc    *process // nil for an HTTP server

	toolsMu sync.Mutex
	tools   []*sdk.Tool
	// relisted is closed, and replaced, each time the tools are listed
	// again.
	relisted chan struct{}
	relistMu sync.Mutex // one listing at a time

	done     chan struct{} // closed once the connection has ended
	endErr   error         // why it ended, when it ended by itself; set before done closes
	closeMu  sync.Mutex
	closing  bool
	closeErr chan struct{} // closed once Close has stopped everything

	// tooLarge is set once the server sent a message over MaxMessageBytes,
	// and coda dropped it for that.
	tooLarge atomic.Bool

	// asked are the questions the server put to the user (elicit.go)
	// since a call last took them: each call's result says what was
	// asked during it, so the run's record has every elicitation.
	askedMu sync.Mutex
	asked   []string
}

// noteAsked keeps what the server asked the user and what came of it.
func (c *Conn) noteAsked(note string) {
	c.askedMu.Lock()
	defer c.askedMu.Unlock()
	if len(c.asked) < maxAskedNotes {
		c.asked = append(c.asked, note)
	}
}

// takeAsked takes the notes kept since it was last called.
func (c *Conn) takeAsked() []string {
	c.askedMu.Lock()
	defer c.askedMu.Unlock()
	notes := c.asked
	c.asked = nil
	return notes
}

// maxAskedNotes bounds the notes kept between two calls.
const maxAskedNotes = 16

// MaxMessageBytes caps one message from a server, decoded (an HTTP body
// inflated from gzip counts as inflated): the MCP SDK's own cap on a stdio
// frame, kept for both transports. A server that sends more is stopped,
// and its warning says why.
const MaxMessageBytes = 16 << 20

// maxMessage is MaxMessageBytes, as messages say it.
const maxMessage = "16 MiB"

// closeGrace is how long a stdio server has to exit after its stdin closes
// before its process group is killed; and how long an HTTP session's
// closing request may take.
const closeGrace = 2 * time.Second

// Start starts the server, connects to it, and lists its tools. ctx bounds
// the start (with Options.StartTimeout); once Start returns, the server
// runs until Close or until it ends by itself (Done). On an error nothing
// is left running.
func Start(ctx context.Context, s Server, opts Options) (*Conn, error) {
	opts = opts.withDefaults()
	c := &Conn{server: s, opts: opts, done: make(chan struct{}), closeErr: make(chan struct{}), relisted: make(chan struct{})}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	var transport sdk.Transport
	if s.URL != "" {
		transport = &sdk.StreamableClientTransport{
			Endpoint:     s.URL,
			HTTPClient:   &http.Client{Transport: headerTransport{http.DefaultTransport, s.Headers, &c.tooLarge}},
			MaxEventSize: MaxMessageBytes + 1<<20, // capped.Read stops first, and says so
			// coda only calls; it needs no stream of the server's own
			// messages, and some servers refuse the GET that opens it.
			DisableStandaloneSSE: true,
		}
	} else {
		p, err := startProcess(s, opts.Log)
		if err != nil {
			return nil, err
		}
		c.proc = p
		transport = &sdk.IOTransport{
			Reader: &capped{r: p.stdout, c: p.stdout, split: lines, over: &c.tooLarge},
			Writer: p.stdin,
			// capped.Read stops first, and says so.
			MaxLineLength: MaxMessageBytes + 1<<20,
		}
	}
	copts := &sdk.ClientOptions{
		Logger: opts.Log,
		// Off the SDK's reading of the server: listing is a request.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go c.relist() },
	}
	if opts.Asker != nil && opts.Asker.CanAsk() {
		copts.ElicitationHandler = elicitVia(opts.Asker, s.Name, c.noteAsked) // and so advertised
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "coda", Version: opts.Version}, copts)
	session, err := client.Connect(ctx, transport, nil)
	if err == nil {
		var tools []*sdk.Tool
		tools, err = listTools(ctx, session)
		c.toolsMu.Lock()
		c.session, c.tools = session, tools
		c.toolsMu.Unlock()
	}
	if err != nil {
		switch {
		case parent.Err() != nil:
			err = parent.Err()
		case ctx.Err() != nil:
			err = fmt.Errorf("it did not finish starting within %s", opts.StartTimeout)
		case c.tooLarge.Load() && c.session != nil:
			err = fmt.Errorf("coda stopped it: its list of tools is over %s, the most coda reads of one MCP message", maxMessage)
		case c.tooLarge.Load():
			err = fmt.Errorf("coda stopped it: its answer to coda's first request is over %s, the most coda reads of one MCP message", maxMessage)
		case unreadable(err):
			// coda dropped it for what it sent; its exit after (a broken
			// pipe, most likely) is what that caused, not the reason.
			err = fmt.Errorf("coda stopped it: coda cannot read what it sent (%v)", err)
		default:
			err = c.startError(err)
		}
		// A server that never finished starting has nothing to wind down.
		c.stop(0)
		return nil, err
	}
	go c.watch()
	return c, nil
}

// listTools lists every page of the server's tools.
func listTools(ctx context.Context, session *sdk.ClientSession) ([]*sdk.Tool, error) {
	var tools []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools: %w", err)
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

// relist lists the server's tools again, after it said they changed: the
// turns that follow offer the new list. A listing that fails keeps the old
// one.
func (c *Conn) relist() {
	c.relistMu.Lock()
	defer c.relistMu.Unlock()
	c.toolsMu.Lock()
	session := c.session
	c.toolsMu.Unlock()
	if session == nil {
		return // still starting: its first listing comes next
	}
	select {
	case <-c.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CallTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	tools, err := listTools(ctx, session)
	if err != nil {
		c.opts.Log.Warn("MCP server: its tools changed, and listing them again failed; the old list stays", "server", c.server.Name, "err", err)
		return
	}
	c.toolsMu.Lock()
	c.tools = tools
	close(c.relisted)
	c.relisted = make(chan struct{})
	c.toolsMu.Unlock()
	c.opts.Log.Info("MCP server: its tools changed", "server", c.server.Name, "tools", len(tools))
}

// toolDefs are the server's tools, as last listed.
func (c *Conn) toolDefs() []*sdk.Tool {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.tools
}

// unreadable reports whether err is coda failing to read what a server
// sent: JSON it cannot decode (nested past what a JSON reader takes, as a
// schema 100,000 deep is, or malformed).
func unreadable(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typ)
}

// startError says why a server did not start: a process that exited says
// how, with the last of what it wrote to stderr.
func (c *Conn) startError(err error) error {
	if c.proc == nil {
		return err
	}
	select {
	case <-c.proc.exited:
	case <-time.After(closeGrace):
		return err
	}
	return c.proc.exitError(err)
}

// watch notes the connection's end: a stdio server's process exiting, or
// an HTTP session closing.
func (c *Conn) watch() {
	var err error
	if c.proc != nil {
		<-c.proc.exited
		err = c.proc.exitError(errors.New("it exited"))
	} else {
		err = c.session.Wait()
		if err == nil {
			err = errors.New("the connection closed")
		}
	}
	if c.tooLarge.Load() {
		// Its exit (a broken pipe, most likely) is what coda's dropping it
		// caused, not the reason.
		err = fmt.Errorf("coda stopped it: it sent a message over %s, the most coda reads of one MCP message", maxMessage)
	}
	c.endErr = err
	close(c.done)
}

// settle waits a moment for a connection that failed a call to be known
// as ended, if it is ending, so that Err says why.
func (c *Conn) settle() {
	select {
	case <-c.done:
	case <-time.After(closeGrace):
	}
}

// Name is the server's name, as the editor gave it.
func (c *Conn) Name() string { return c.server.Name }

// ToolNames are the names of the server's tools, as it gave them.
func (c *Conn) ToolNames() []string {
	tools := c.toolDefs()
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// Done is closed once the connection has ended, by Close or by itself.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended by itself; nil while it runs, and
// after Close.
func (c *Conn) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closing {
		return nil
	}
	return c.endErr
}

// Close stops the server. When it returns, a stdio server's process and
// whatever it started in its process group are gone. Close may be called
// more than once, from any goroutine.
func (c *Conn) Close() {
	c.closeMu.Lock()
	first := !c.closing
	c.closing = true
	c.closeMu.Unlock()
	if !first {
		<-c.closeErr
		return
	}
	c.stop(closeGrace)
	<-c.done
	close(c.closeErr)
}

// stop closes the session and stops the process, which gets grace to exit
// by itself. The SDK's close waits for the calls in flight; the process is
// stopped meanwhile, which ends those calls.
func (c *Conn) stop(grace time.Duration) {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if c.session != nil {
			_ = c.session.Close()
		}
	}()
	if c.proc != nil {
		c.proc.stop(grace)
	}
	select {
	case <-closed:
	case <-time.After(closeGrace):
		c.opts.Log.Warn("MCP server: closing its session did not finish; going on", "server", c.server.Name)
	}
}

// headerTransport sends the editor's headers with every request to an HTTP
// server, and the trace context of the span it is made in, and caps what it reads of each message of a reply (capped): a
// JSON body is one message, an event stream one an event. The body is
// capped as decoded, after net/http has inflated it from gzip.
type headerTransport struct {
	base     http.RoundTripper
	headers  http.Header
	tooLarge *atomic.Bool
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// A request made in a tool call's span carries its trace context
	// (W3C traceparent), so the server's spans nest under the call's.
	traceparent, tracestate := telemetry.Traceparent(r.Context())
	if len(t.headers) > 0 || traceparent != "" {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = v
		}
		if traceparent != "" {
			r.Header.Set("traceparent", traceparent)
			if tracestate != "" {
				r.Header.Set("tracestate", tracestate)
			}
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	split := whole
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.TrimSpace(strings.ToLower(ct)), "text/event-stream") {
		split = events
	}
	resp.Body = &capped{r: resp.Body, c: resp.Body, split: split, over: t.tooLarge}
	return resp, nil
}

// errTooLarge is what a capped reader returns past the cap.
var errTooLarge = fmt.Errorf("an MCP message over %s", maxMessage)

// capped reads a server's messages, each at most MaxMessageBytes long:
// a line each (stdio), an event each (an event stream: it ends at a blank
// line), or the whole body (JSON). Past the cap it sets over and fails, so
// the SDK drops the connection before it holds more.
type capped struct {
	r      io.Reader
	c      io.Closer
	split  split
	over   *atomic.Bool
	n      int  // bytes of the message read so far
	inLine bool // an event's line has begun (events)
}

// How a capped stream splits into messages.
type split int

const (
	whole split = iota
	lines
	events
)

func (c *capped) Read(p []byte) (int, error) {
	if c.n > MaxMessageBytes {
		return 0, errTooLarge
	}
	p = p[:min(len(p), MaxMessageBytes+1-c.n)]
	n, err := c.r.Read(p)
	switch c.split {
	case whole:
		c.n += n
	case lines:
		if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
			c.n = n - i - 1
		} else {
			c.n += n
		}
	case events:
		for _, b := range p[:n] {
			switch b {
			case '\n':
				if !c.inLine {
					c.n = -1 // a blank line: the event ended
				}
				c.inLine = false
			case '\r':
			default:
				c.inLine = true
			}
			c.n++
		}
	}
	if c.n > MaxMessageBytes {
		c.over.Store(true)
		return n, errTooLarge
	}
	return n, err
}

func (c *capped) Close() error { return c.c.Close() }
