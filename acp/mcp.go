package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp"
)

// A session's MCP servers (DESIGN §14) start in the background when the
// session starts, so session/new answers at once; a prompt waits for the
// ones still starting, for at most Options.MCPStartWait. They stop with
// their session (session/close) and with the connection (Serve). A server
// that fails to start, or dies, is a warning in the next prompt response
// (or session/new's, when it failed at once) and a log line; never a failed
// session.

// mcpSet is one session's MCP servers.
type mcpSet struct {
	cancel context.CancelFunc // ends the starts still going
	wg     sync.WaitGroup     // each server's start-and-watch goroutine

	mu       sync.Mutex
	servers  []*mcpServer
	warnings []string // not yet given to the editor
	stopped  bool
}

// mcpServer is one server of a session.
type mcpServer struct {
	name    string
	started chan struct{} // closed once its start ended, either way
	conn    *mcp.Conn     // set before started closes, when it started
	err     error         // set before started closes, when it failed
	late    bool          // a prompt went ahead without it, and said so
	dead    bool          // it ended by itself, and a prompt said so
}

// warn gives a warning to the next response, and to the log.
func (set *mcpSet) warn(s *Server, sess *session, w string) {
	s.log.Warn(w, "session", sess.id)
	set.mu.Lock()
	set.warnings = append(set.warnings, w)
	set.mu.Unlock()
}

// takeWarnings returns the warnings not yet given, and forgets them.
func (set *mcpSet) takeWarnings() []string {
	set.mu.Lock()
	defer set.mu.Unlock()
	w := set.warnings
	set.warnings = nil
	return w
}

// startMCP starts the servers of a session/new, load or resume request's
// mcpServers. A wrong-typed list is -32602 naming the field; nothing starts
// then. An entry that cannot be started (an unknown command, a transport
// coda does not speak) is a warning for the request's own response
// (mcpWarnings).
func (s *Server) startMCP(sess *session, raw json.RawMessage) error {
	servers, warnings, err := parseMCPServers(raw, sess.cwd)
	if err != nil {
		return err
	}
	if len(servers) == 0 && len(warnings) == 0 {
		return nil
	}
	set := &mcpSet{}
	ctx, cancel := context.WithCancel(context.Background())
	set.cancel = cancel
	for _, w := range warnings {
		set.warn(s, sess, w)
	}
	s.mu.Lock()
	closing := s.mcpClosing
	if !closing {
		if s.mcpSets == nil {
			s.mcpSets = map[*mcpSet]bool{}
		}
		s.mcpSets[set] = true
	}
	s.mu.Unlock()
	for _, srv := range servers {
		if closing {
			set.warn(s, sess, fmt.Sprintf("MCP server %s was not started: coda is shutting down", srv.Name))
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
				set.warn(s, sess, fmt.Sprintf("MCP server %s was not started: %v", srv.Name, err))
				continue
			}
		}
		m := &mcpServer{name: srv.Name, started: make(chan struct{})}
		set.servers = append(set.servers, m)
		set.wg.Add(1)
		go s.runMCP(ctx, sess, set, m, srv)
	}
	sess.mu.Lock()
	old := sess.mcp
	sess.mcp = set
	sess.mu.Unlock()
	if old != nil {
		go s.stopSet(old)
	}
	return nil
}

// mcpWarnings returns what startMCP found wrong at once, for the response
// of the request that started the session.
func (sess *session) mcpWarnings() []string {
	sess.mu.Lock()
	set := sess.mcp
	sess.mu.Unlock()
	if set == nil {
		return nil
	}
	return set.takeWarnings()
}

// runMCP starts one server, then watches it until it ends.
func (s *Server) runMCP(ctx context.Context, sess *session, set *mcpSet, m *mcpServer, srv mcp.Server) {
	defer set.wg.Done()
	begun := time.Now()
	conn, err := mcp.Start(ctx, srv, mcp.Options{
		Log: s.log.With("session", sess.id), Version: s.opts.Version,
		StartTimeout: s.opts.MCPStartTimeout, CallTimeout: s.opts.MCPCallTimeout,
	})
	set.mu.Lock()
	stopped := set.stopped
	if err == nil && !stopped {
		m.conn = conn
	}
	m.err = err
	set.mu.Unlock()
	if err != nil && !stopped {
		// Said before started closes, so the prompt waiting for it
		// (mcpTurn) gives the warning.
		set.warn(s, sess, fmt.Sprintf("MCP server %s failed to start: %v", srv.Name, err))
	}
	close(m.started)
	switch {
	case err != nil:
		return
	case stopped:
		conn.Close()
		return
	}
	s.log.Info("MCP server started", "session", sess.id, "server", srv.Name, "tools", len(conn.ToolNames()), "took", time.Since(begun).Round(time.Millisecond))
	<-conn.Done()
	if err := conn.Err(); err != nil {
		// The next prompt's response says so too (mcpTurn).
		s.log.Warn(stoppedWarning(srv.Name, err), "session", sess.id)
	}
}

func stoppedWarning(server string, err error) string {
	return fmt.Sprintf("MCP server %s stopped: %v; its tools are no longer offered", server, err)
}

// mcpTurn gives a turn its session's MCP tools, beside the built-in ones,
// and the warnings not yet given. When the agent offers MCP tools it first
// waits for the servers still starting, for at most Options.MCPStartWait
// or until the turn is cancelled: one not ready by then offers its tools
// from a later prompt. Each server waited for is shown as a tool call, so
// the editor says what the prompt waits for.
func (s *Server) mcpTurn(ctx context.Context, sess *session, turn *engine.Turn, sink engine.Sink) {
	sess.mu.Lock()
	set := sess.mcp
	sess.mu.Unlock()
	if set == nil {
		return
	}
	if engine.OffersMCP(s.opts.Agent) {
		shown := s.showStarting(ctx, set, sink)
		wait := time.NewTimer(s.opts.MCPStartWait)
		defer wait.Stop()
	servers:
		for _, m := range set.servers {
			select {
			case <-m.started:
				s.showStarted(ctx, set, m, shown, sink, false)
			case <-wait.C:
				break servers
			case <-ctx.Done():
				for _, m := range set.servers {
					s.showStarted(context.WithoutCancel(ctx), set, m, shown, sink, true)
				}
				return
			}
		}
		for _, m := range set.servers {
			s.showStarted(ctx, set, m, shown, sink, false)
		}
		var conns []*mcp.Conn
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
		if len(conns) > 0 {
			tools := maps.Clone(turn.Tools)
			if tools == nil {
				tools = map[string]engine.Tool{}
			}
			mcp.Tools(conns, tools)
			turn.Tools = tools
		}
	}
	turn.Warnings = append(turn.Warnings, set.takeWarnings()...)
}

// showStarting shows each of the set's servers still starting as a tool
// call in progress; it returns their calls' ids.
func (s *Server) showStarting(ctx context.Context, set *mcpSet, sink engine.Sink) map[*mcpServer]string {
	var shown map[*mcpServer]string
	for _, m := range set.servers {
		select {
		case <-m.started:
			continue
		default:
		}
		if shown == nil {
			shown = map[*mcpServer]string{}
		}
		shown[m] = s.opts.Engine.NewID("t")
		_ = sink.Emit(ctx, engine.Event{Kind: engine.EventToolCall, ToolCall: &engine.ToolCallEvent{
			ID: shown[m], Title: "Start MCP server " + m.name, Kind: "other", Status: engine.ToolInProgress,
		}})
	}
	return shown
}

// showStarted ends m's tool call of showStarting, if it has one still
// open: the server started, failed, is still starting, or the wait was
// cancelled.
func (s *Server) showStarted(ctx context.Context, set *mcpSet, m *mcpServer, shown map[*mcpServer]string, sink engine.Sink, cancelled bool) {
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
		text = fmt.Sprintf("Still starting after %s: its tools are offered from a later prompt.", s.opts.MCPStartWait)
		if cancelled {
			text = "Cancelled."
		}
	}
	upd.Content = []engine.ToolContent{{Text: text}}
	_ = sink.Emit(ctx, engine.Event{Kind: engine.EventToolCallUpdate, ToolCall: upd})
}

// stopMCP stops a session's servers in the background; the channel closes
// once they are all gone.
func (s *Server) stopMCP(sess *session) <-chan struct{} {
	sess.mu.Lock()
	set := sess.mcp
	sess.mu.Unlock()
	done := make(chan struct{})
	if set == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		s.stopSet(set)
	}()
	return done
}

// stopSet stops a session's servers: starts still going are abandoned
// (their processes killed), started ones closed. When it returns, none of
// their processes is left.
func (s *Server) stopSet(set *mcpSet) {
	set.mu.Lock()
	set.stopped = true
	var conns []*mcp.Conn
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
	s.mu.Lock()
	delete(s.mcpSets, set)
	s.mu.Unlock()
}

// stopAllMCP stops every session's servers as the connection ends, after
// the last prompt was answered; no server starts after it.
func (s *Server) stopAllMCP() {
	s.mu.Lock()
	s.mcpClosing = true
	sets := make([]*mcpSet, 0, len(s.mcpSets))
	for set := range s.mcpSets {
		sets = append(sets, set)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, set := range sets {
		wg.Go(func() { s.stopSet(set) })
	}
	wg.Wait()
}

// both is closed once a and b are.
func both(a, b <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		<-a
		<-b
		close(done)
	}()
	return done
}

// parseMCPServers reads mcpServers as ACP gives them: stdio entries
// {name, command, args, env: [{name, value}]} and http ones {type: "http",
// name, url, headers: [{name, value}]}. A value of the wrong type is
// -32602 naming the field. What coda cannot use comes back as warnings: an
// SSE server (mcpCapabilities.sse is false), a name given twice.
func parseMCPServers(raw json.RawMessage, cwd string) ([]mcp.Server, []string, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil, nil
	}
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil, nil, fmt.Errorf("%w: mcpServers: expected an array of MCP servers", ErrInvalidParams)
	}
	var (
		servers  []mcp.Server
		warnings []string
		seen     = map[string]bool{}
	)
	for i, e := range entries {
		f, err := fieldsOf(e, fmt.Sprintf("mcpServers[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		name, err := f.str("name", true)
		if err != nil {
			return nil, nil, err
		}
		kind, err := f.str("type", false)
		if err != nil {
			return nil, nil, err
		}
		srv := mcp.Server{Name: name, Dir: cwd}
		switch kind {
		case "http", "sse":
			if srv.URL, err = f.str("url", true); err != nil {
				return nil, nil, err
			}
			if u, err := url.Parse(srv.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, nil, fmt.Errorf("%w: %s.url: %q is not an http or https URL", ErrInvalidParams, f.path, srv.URL)
			}
			headers, err := f.pairs("headers")
			if err != nil {
				return nil, nil, err
			}
			srv.Headers = http.Header{}
			for _, h := range headers {
				srv.Headers.Add(h[0], h[1])
			}
		case "", "stdio":
			if srv.Command, err = f.str("command", true); err != nil {
				return nil, nil, err
			}
			if srv.Args, err = f.strs("args"); err != nil {
				return nil, nil, err
			}
			env, err := f.pairs("env")
			if err != nil {
				return nil, nil, err
			}
			for _, v := range env {
				srv.Env = append(srv.Env, v[0]+"="+v[1])
			}
		default:
			return nil, nil, fmt.Errorf("%w: %s.type: unknown transport %q (coda takes stdio and http)", ErrInvalidParams, f.path, kind)
		}
		switch {
		case kind == "sse":
			warnings = append(warnings, fmt.Sprintf("MCP server %s was not started: coda does not speak MCP's SSE transport (mcpCapabilities.sse is false); give its streamable HTTP endpoint as type \"http\"", name))
		case seen[name]:
			warnings = append(warnings, fmt.Sprintf("MCP server %s was not started: an earlier server has the same name", name))
		default:
			seen[name] = true
			servers = append(servers, srv)
		}
	}
	return servers, warnings, nil
}

// fields are a JSON object's members, read with errors naming the field.
type fields struct {
	path string
	m    map[string]json.RawMessage
}

func fieldsOf(raw json.RawMessage, path string) (fields, error) {
	f := fields{path: path}
	if json.Unmarshal(raw, &f.m) != nil || f.m == nil {
		return f, fmt.Errorf("%w: %s: expected an object", ErrInvalidParams, path)
	}
	return f, nil
}

// str is a string member; a required one must be there and not empty.
func (f fields) str(key string, required bool) (string, error) {
	raw, ok := f.m[key]
	if !ok || isNull(raw) {
		if required {
			return "", fmt.Errorf("%w: %s.%s is required", ErrInvalidParams, f.path, key)
		}
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%w: %s.%s: expected a string", ErrInvalidParams, f.path, key)
	}
	if required && s == "" {
		return "", fmt.Errorf("%w: %s.%s is empty", ErrInvalidParams, f.path, key)
	}
	return s, nil
}

// strs is an optional array of strings.
func (f fields) strs(key string) ([]string, error) {
	raw, ok := f.m[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var out []string
	if json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("%w: %s.%s: expected an array of strings", ErrInvalidParams, f.path, key)
	}
	return out, nil
}

// pairs is an optional array of {name, value} objects (env, headers).
func (f fields) pairs(key string) ([][2]string, error) {
	raw, ok := f.m[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("%w: %s.%s: expected an array of {name, value} objects", ErrInvalidParams, f.path, key)
	}
	out := make([][2]string, 0, len(items))
	for j, item := range items {
		p, err := fieldsOf(item, fmt.Sprintf("%s.%s[%d]", f.path, key, j))
		if err != nil {
			return nil, err
		}
		name, err := p.str("name", true)
		if err != nil {
			return nil, err
		}
		value, err := p.str("value", false)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}
