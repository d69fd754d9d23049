package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/outputspec"
	statestore "github.com/coda-acp/coda/store"
)

// A session is one conversation: its working directory, its output levels
// and its history. At most one prompt runs in it at a time.
type session struct {
	id  string
	cwd string
	ws  engine.Workspace

	mu sync.Mutex
	// meta is the session/new _meta.coda.output level (set once); config
	// the output_format option's, once the user picks one. Only the read
	// loop writes either, or the session's order off it (order.go).
	meta   *outputspec.Level
	config string
	// outputs are the contracts those levels give, compiled once: again
	// only when the option changes or a prompt brings its own spec.
	outputs *blueprint.Outputs
	// history is what of the earlier turns the next one can use
	// (engine.KeepHistory): a long session's memory stays bounded.
	history []engine.Exchange
	// running is the prompt turn in progress; nil when none runs.
	running *running
	// queue are the prompts read while a turn ran, to answer after it, in
	// order; queueBytes their content's weight (queue.go). starting is set
	// while the first of them starts, so that none starts beside it.
	queue      []*queuedPrompt
	queueBytes int
	starting   bool
	// toolSupport is what the session has learned of its models' tool
	// calling (engine.ToolSupport): a model whose server refused tools is
	// called without them for the rest of the session.
	toolSupport *engine.ToolSupport
	// private is what the private files under the session's roots hold,
	// found once a session (engine.Turn.Private).
	private *taint.Index
	// mcp are the session's MCP servers (mcp.go); nil without any.
	mcp *mcp.Set
	// taint is what the taint gate keeps of the session's turns for the
	// next (engine.Turn.Tainted): taint belongs to the session, and its
	// file keeps it too.
	taint taint.Session

	// What the session's file keeps besides (store.go), and the pickers
	// (modes.go): the session/new _meta.coda.output as sent, the model
	// and the reasoning effort picked ("" is the launch's, effort.go), the
	// mode, the title.
	additional []string
	metaRaw    json.RawMessage
	model      string
	effort     string
	mode       string
	title      string
	// commentary is the session's _meta.coda.commentary; "" is the
	// launch's (commentary.go).
	commentary string
	createdAt  time.Time
	// announced is set once the answer that opened the session is out;
	// listSent once the options the client has include the providers'
	// list; answering from a prompt's start until its answer is out, when
	// the list waits (listed.go).
	announced, listSent, answering bool
	// noticed are the session's own warnings sent as notices (notices.go).
	noticed map[string]bool
	// saving orders the writes of the session's file; gone, set under it
	// by session/delete, stops them. file is the session's file, made at
	// session/new or read at load (nil without a state directory).
	saving sync.Mutex
	gone   bool
	file   *statestore.Session

	// spent is what the session's turns cost (usage.go).
	spent sessionSpend
}

// running is a session's prompt turn in progress.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}  // closed once the prompt is answered
	prompt []contentBlock // as the client sent it, for the session's file
	id     string         // the prompt's request id (idKey), for $/cancel_request
	steer  *steerBox      // the prompts that joined the turn (queue.go)
}

// tainted is what the session's turns left the taint gate.
func (sess *session) tainted() taint.Session {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.taint
}

// taintedBy keeps what a turn's gate had of the session; a turn without
// the gate leaves what the session had.
func (sess *session) taintedBy(t taint.Session) {
	if len(t.Read) == 0 && len(t.Wrote) == 0 {
		return
	}
	sess.mu.Lock()
	sess.taint = t
	sess.mu.Unlock()
}

// remember adds a finished turn to the session's history, keeping only what
// the next turn can use, without the earlier turns its compaction cut
// (engine.ForgetHistory).
func (sess *session) remember(ex engine.Exchange, cut int) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.history = engine.KeepHistory(engine.ForgetHistory(sess.history, cut, ex))
}

// cancelTurn cancels the session's running prompt, if any.
func (sess *session) cancelTurn() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.running != nil {
		sess.running.cancel()
	}
}

// newSession handles session/new. A _meta.coda.output whose compile reads
// files (contracts.ReadsFiles) is compiled off the read loop (aside): the
// client cannot name the session before its response, so nothing waits on
// the order.
func (s *Server) newSession(ctx context.Context, r *request[newSessionResponse], p *newSessionRequest) (*newSessionResponse, error) {
	cwd, err := checkDirs(*p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	sess := &session{cwd: cwd, additional: p.AdditionalDirectories, mode: modeAsk, createdAt: time.Now(), toolSupport: engine.NewToolSupport(), private: taint.NewIndex()}
	if sess.commentary, err = p.Meta.commentary(); err != nil {
		return nil, err
	}
	raw := p.Meta.output()
	if raw != nil {
		if err := s.out.Shapes("_meta.coda.output"); err != nil {
			return nil, err
		}
	}
	_, listed := s.pick.Listing.Listed()
	if waitList := s.pick.Listing.On() && !listed; waitList || raw != nil && s.out.ReadsFiles(raw) {
		// Off the read loop: the providers' list, waited for briefly
		// (listed.go), or the files the spec names.
		return aside(ctx, r, nil, func(ctx context.Context) (*newSessionResponse, error) {
			if waitList {
				s.awaitListed(ctx, newSessionListWait)
			}
			return s.openSession(r, p, sess, raw)
		})
	}
	return s.openSession(r, p, sess, raw)
}

// openSession opens the session sess that session/new asks for, with raw,
// its _meta.coda.output (nil for none).
func (s *Server) openSession(r *request[newSessionResponse], p *newSessionRequest, sess *session, raw json.RawMessage) (*newSessionResponse, error) {
	var err error
	if raw != nil {
		if sess.meta, err = s.out.MetaLevel(raw, sess.cwd); err != nil {
			return nil, err
		}
		sess.metaRaw = raw
	}
	if sess.outputs, err = s.out.Session(sess.meta, ""); err != nil {
		return nil, err
	}
	sess.id = s.opts.Engine.NewID("s")
	s.workspace(sess)
	if err := sess.startMCP(s.mcp, p.MCPServers); err != nil {
		return nil, err
	}

	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()

	warning := s.load.saveSession(sess, nil)
	res := s.sessionResponse(sess, warning)
	r.Then(s.announce(sess, res.Meta))
	return &newSessionResponse{Meta: res.Meta, ConfigOptions: res.ConfigOptions, Modes: res.Modes, SessionID: sess.id}, nil
}

// session is the open session id names.
func (s *Server) session(id string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.load.loading[id] != nil {
		return nil, loadingErr(id)
	}
	sess := s.sessions[id]
	if sess == nil {
		return nil, fmt.Errorf("%w: unknown session %q", ErrNotFound, id)
	}
	return sess, nil
}

// setConfigOption handles session/set_config_option. A change that reads
// files the client names (readsFiles) is made off the read loop, the
// session's later messages waiting for it (order.go).
func (s *Server) setConfigOption(ctx context.Context, r *request[setSessionConfigOptionResponse], p *setSessionConfigOptionRequest) (*setSessionConfigOptionResponse, error) {
	sess, err := s.session(*p.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil || strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%w: value: %s takes a string value such as %q", ErrInvalidParams, *p.ConfigID, pickers.OptionExample(*p.ConfigID))
	}
	id, value := *p.ConfigID, strings.TrimSpace(value)
	set := func(context.Context) (*setSessionConfigOptionResponse, error) {
		warnings, err := s.setOption(sess, id, value)
		if err != nil {
			return nil, err
		}
		if id == optionMode {
			s.notifyMode(sess)
		}
		if w := s.load.saveSession(sess, nil); w != "" {
			warnings = append(warnings, w)
		}
		s.noticeSession(sess, warnings)
		return &setSessionConfigOptionResponse{ConfigOptions: s.configOptions(sess), Meta: withWarnings(warnings)}, nil
	}
	if s.readsFiles(sess, id, value) {
		return sessionAside(ctx, s, r, sess.id, set)
	}
	return set(nil)
}

// readsFiles reports whether setting the session's option id to value
// reads files: a script: model's (when the launch's model is one, the
// only case a client may pick one), or the schema or validator a format
// change recompiles.
func (s *Server) readsFiles(sess *session, id, value string) bool {
	switch id {
	case optionModel:
		return s.pick.ReadsModelFile(value)
	case optionFormat:
		return s.out.ReadsFiles(sess.metaRaw)
	}
	return false
}

// closeSession handles session/close. A running prompt is cancelled, and
// the close is answered only after it: the prompt's "cancelled" answer comes
// first, and nothing is sent for the session after the close's answer.
func (s *Server) closeSession(ctx context.Context, r *request[closeSessionResponse], p *closeSessionRequest) (*closeSessionResponse, error) {
	sess, err := s.session(*p.SessionID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	// Its MCP servers stop meanwhile; the close is answered once they are
	// gone.
	answer := r.Keep()
	s.afterTurn(sess, sess.stopMCP(), func() { answer.Reply(&closeSessionResponse{}) })
	return nil, nil
}

// afterTurn cancels the session's running prompt, if any, and sends answer
// once that prompt has answered and stopped (the session's MCP servers) is
// closed; as soon as stopped is when none runs.
func (s *Server) afterTurn(sess *session, stopped <-chan struct{}, answer func()) {
	// Under the session's lock the turn cannot finish between the check
	// and conn.after, which needs the turn still owed.
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if r := sess.running; r != nil {
		r.cancel()
		s.conn.After(both(r.done, stopped), answer)
		return
	}
	s.conn.AfterOrNow(stopped, answer)
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

// cancelSession handles session/cancel: the running prompt stops and is
// answered "cancelled", and so is every prompt queued behind it.
func (s *Server) cancelSession(_ context.Context, p *cancelNotification) {
	s.mu.Lock()
	sess := s.sessions[*p.SessionID]
	s.mu.Unlock()
	if sess == nil {
		s.log.Warn("session/cancel for an unknown session", "session", *p.SessionID)
		return
	}
	s.prompts.drop(sess)
	sess.cancelTurn()
}

// cancelRequest handles $/cancel_request: a running or queued
// session/prompt with that id is cancelled. Other requests are answered before the next
// message is read, so there is nothing else to cancel.
func (s *Server) cancelRequest(_ context.Context, p *cancelRequestNotification) {
	key, ok := jsonrpc.IDKey(p.RequestID)
	if !ok {
		return
	}
	if sess := s.prompts.sessionOf(key); sess != nil && !s.prompts.dropID(sess, key) {
		sess.mu.Lock()
		if r := sess.running; r != nil && r.id == key {
			r.cancel()
		}
		sess.mu.Unlock()
	}
}

// publicSpecOf is a contract's spec as advertised.
func publicSpecOf(c *outputspec.Contract) publicSpec {
	spec := c.Spec()
	p := publicSpec{Format: c.Format(), Instructions: spec.Instructions, Example: spec.Example}
	p.JSONSchema = spec.Schema != nil || spec.SchemaFile != ""
	if spec.Validator != "" {
		p.Validator = filepath.Base(spec.Validator)
	}
	return p
}
