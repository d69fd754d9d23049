package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine"
)

// A session's MCP servers (DESIGN §14) start in the background when the
// session starts, so the request that starts it answers at once; a turn
// waits for the ones still starting, for at most Options.StartWait. They
// stop with their session (Set.Stop) and with the connection (Host.Close).
// A server that fails to start, or dies, is a warning for the next response
// that asks (Set.Warnings, Set.Turn) and a log line; never a failed session.

// DefaultStartWait is Options.StartWait's default.
const DefaultStartWait = 10 * time.Second

// A Host runs the MCP servers of one connection's sessions: Close stops
// every one of them, and none starts after it.
type Host struct {
	opts Options

	mu     sync.Mutex
	sets   map[*Set]bool
	closed bool
}

// NewHost makes the host of one connection's servers.
func NewHost(opts Options) *Host {
	return &Host{opts: opts.withDefaults(), sets: map[*Set]bool{}}
}

// A Set is one session's MCP servers. The methods of a nil Set do
// nothing: a session without servers has none.
type Set struct {
	host    *Host
	session string
	log     *slog.Logger
	asker   engine.Asker       // the session's, for its servers' questions
	cancel  context.CancelFunc // ends the starts still going
	wg      sync.WaitGroup     // each server's start-and-watch goroutine

	mu       sync.Mutex
	servers  []*server
	warnings []string // not yet given to the editor
	stopped  bool
}

// server is one server of a set.
type server struct {
	name    string
	started chan struct{} // closed once its start ended, either way
	conn    *Conn         // set before started closes, when it started
	err     error         // set before started closes, when it failed
	late    bool          // a turn went ahead without it, and said so
	dead    bool          // it ended by itself, and a turn said so
}

// Start starts a session's servers in the background and returns at once;
// nil when there are neither servers nor warnings. warnings are what the
// caller found it could not start (an unsupported transport, a name given
// twice): they come first in Warnings. A command that cannot be found is a
// warning too, and no server starts once the host is closed. asker, when
// not nil, is who the servers' questions go to (Options.Asker).
func (h *Host) Start(session string, servers []Server, warnings []string, asker engine.Asker) *Set {
	if len(servers) == 0 && len(warnings) == 0 {
		return nil
	}
	set := &Set{host: h, session: session, log: h.opts.Log.With("session", session), asker: asker}
	ctx, cancel := context.WithCancel(context.Background())
	set.cancel = cancel
	for _, w := range warnings {
		set.warn(w)
	}
	h.mu.Lock()
	closed := h.closed
	if !closed {
		h.sets[set] = true
	}
	h.mu.Unlock()
	for _, srv := range servers {
		if closed {
			set.warn(fmt.Sprintf("MCP server %s was not started: coda is shutting down", srv.Name))
			continue
		}
		if srv.URL == "" {
			// A relative path with a directory in it runs from the session's
			// directory, as the process will.
			path := srv.Command
			if !filepath.IsAbs(path) && strings.ContainsRune(path, filepath.Separator) {
				path = filepath.Join(srv.Dir, path)
			}
			if _, err := exec.LookPath(path); err != nil {
				set.warn(fmt.Sprintf("MCP server %s was not started: %v", srv.Name, err))
				continue
			}
		}
		m := &server{name: srv.Name, started: make(chan struct{})}
		set.servers = append(set.servers, m)
		set.wg.Add(1)
		go set.run(ctx, m, srv)
	}
	return set
}

// Close stops every session's servers, as the connection ends; none starts
// after it. When it returns, none of their processes is left.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	sets := make([]*Set, 0, len(h.sets))
	for set := range h.sets {
		sets = append(sets, set)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, set := range sets {
		wg.Go(set.stop)
	}
	wg.Wait()
}

// warn gives a warning to the next response, and to the log.
func (set *Set) warn(w string) {
	set.log.Warn(w)
	set.mu.Lock()
	set.warnings = append(set.warnings, w)
	set.mu.Unlock()
}

// Warnings returns the warnings not yet given, and forgets them: for the
// response of the request that started the session, before any turn.
func (set *Set) Warnings() []string {
	if set == nil {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	w := set.warnings
	set.warnings = nil
	return w
}

// run starts one server, then watches it until it ends.
func (set *Set) run(ctx context.Context, m *server, srv Server) {
	defer set.wg.Done()
	begun := time.Now()
	opts := set.host.opts
	opts.Log, opts.Asker = set.log, set.asker
	conn, err := Start(ctx, srv, opts)
	set.mu.Lock()
	stopped := set.stopped
	if err == nil && !stopped {
		m.conn = conn
	}
	m.err = err
	set.mu.Unlock()
	if err != nil && !stopped {
		// Said before started closes, so the turn waiting for it gives the
		// warning.
		set.warn(fmt.Sprintf("MCP server %s failed to start: %v", srv.Name, err))
	}
	close(m.started)
	switch {
	case err != nil:
		return
	case stopped:
		conn.Close()
		return
	}
	set.log.Info("MCP server started", "server", srv.Name, "tools", len(conn.ToolNames()), "took", time.Since(begun).Round(time.Millisecond))
	<-conn.Done()
	if err := conn.Err(); err != nil {
		// The next turn's response says so too (Turn).
		set.log.Warn(stoppedWarning(srv.Name, err))
	}
}

func stoppedWarning(server string, err error) string {
	return fmt.Sprintf("MCP server %s stopped: %v; its tools are no longer offered", server, err)
}

// Turn readies the set for a turn. When the turn offers MCP tools
// (offered: blueprint.Blueprint.OffersMCP) it first waits for the servers still
// starting, for at most Options.StartWait or until ctx ends: one not ready
// by then offers its tools from a later turn. Each server waited for is
// shown on sink as a tool call (its id from newID("t")), so the editor says
// what the prompt waits for. It returns the servers whose tools the turn
// offers (Tools names them) and the warnings not yet given.
func (set *Set) Turn(ctx context.Context, offered bool, sink engine.Sink, newID func(prefix string) string) ([]*Conn, []string) {
	if set == nil {
		return nil, nil
	}
	if !offered {
		return nil, set.Warnings()
	}
	wait := set.host.opts.StartWait
	shown := set.showStarting(ctx, sink, newID)
	timer := time.NewTimer(wait)
	defer timer.Stop()
servers:
	for _, m := range set.servers {
		select {
		case <-m.started:
			set.showStarted(ctx, m, shown, sink, false)
		case <-timer.C:
			break servers
		case <-ctx.Done():
			for _, m := range set.servers {
				set.showStarted(context.WithoutCancel(ctx), m, shown, sink, true)
			}
			return nil, set.Warnings()
		}
	}
	for _, m := range set.servers {
		set.showStarted(ctx, m, shown, sink, false)
	}
	var conns []*Conn
	set.mu.Lock()
	for _, m := range set.servers {
		select {
		case <-m.started:
			if m.conn == nil {
				break // its failure is a warning already
			}
			switch err := m.conn.Err(); {
			case err == nil:
				conns = append(conns, m.conn)
			case !m.dead:
				m.dead = true
				set.warnings = append(set.warnings, stoppedWarning(m.name, err))
			}
		default:
			if !m.late {
				m.late = true
				set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s is still starting: its tools are offered from a later prompt", m.name))
			}
		}
	}
	set.mu.Unlock()
	return conns, set.Warnings()
}

// StartToolName is the name (ACP's ToolCall.name) of the tool call that
// shows a server starting: no tool of a server, coda's own step.
const StartToolName = "start_mcp_server"

// showStarting shows each server still starting as a tool call in
// progress; it returns their calls' ids.
func (set *Set) showStarting(ctx context.Context, sink engine.Sink, newID func(string) string) map[*server]string {
	var shown map[*server]string
	for _, m := range set.servers {
		select {
		case <-m.started:
			continue
		default:
		}
		if shown == nil {
			shown = map[*server]string{}
		}
		shown[m] = newID("t")
		_ = sink.Emit(ctx, engine.Event{Kind: engine.EventToolCall, ToolCall: &engine.ToolCallEvent{
			ID: shown[m], Title: "Start MCP server " + m.name, Name: StartToolName, Kind: "other", Status: engine.ToolInProgress,
		}})
	}
	return shown
}

// showStarted ends m's tool call of showStarting, if it has one still
// open: the server started, failed, is still starting, or the wait was
// cancelled.
func (set *Set) showStarted(ctx context.Context, m *server, shown map[*server]string, sink engine.Sink, cancelled bool) {
	id, ok := shown[m]
	if !ok {
		return
	}
	delete(shown, m)
	upd := &engine.ToolCallEvent{ID: id, Status: engine.ToolFailed}
	var text string
	select {
	case <-m.started:
		set.mu.Lock()
		conn, err := m.conn, m.err
		set.mu.Unlock()
		switch {
		case conn != nil:
			upd.Status, text = engine.ToolCompleted, fmt.Sprintf("Started, with %d tools.", len(conn.ToolNames()))
		case err != nil:
			text = fmt.Sprintf("It failed to start: %v", err)
		default:
			text = "It was stopped."
		}
	default:
		text = fmt.Sprintf("Still starting after %s: its tools are offered from a later prompt.", set.host.opts.StartWait)
		if cancelled {
			text = "Cancelled."
		}
	}
	upd.Content = []engine.ToolContent{{Text: text}}
	_ = sink.Emit(ctx, engine.Event{Kind: engine.EventToolCallUpdate, ToolCall: upd})
}

// Stop stops the set's servers in the background; the channel closes once
// they are all gone.
func (set *Set) Stop() <-chan struct{} {
	done := make(chan struct{})
	if set == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		set.stop()
	}()
	return done
}

// stop stops the set's servers: starts still going are abandoned (their
// processes killed), started ones closed. When it returns, none of their
// processes is left.
func (set *Set) stop() {
	set.mu.Lock()
	set.stopped = true
	var conns []*Conn
	for _, m := range set.servers {
		if m.conn != nil {
			conns = append(conns, m.conn)
		}
	}
	set.mu.Unlock()
	set.cancel()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.Close)
	}
	wg.Wait()
	set.wg.Wait()
	set.host.mu.Lock()
	delete(set.host.sets, set)
	set.host.mu.Unlock()
}
