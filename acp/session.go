package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/outputspec"
	statestore "github.com/coda-acp/coda/store"
	"github.com/coda-acp/coda/validators"
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
// the next turn can use.
func (sess *session) remember(ex engine.Exchange) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.history = engine.KeepHistory(append(sess.history, ex))
}

// cancelTurn cancels the session's running prompt, if any.
func (sess *session) cancelTurn() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.running != nil {
		sess.running.cancel()
	}
}

// levels are the session's levels of the output cascade after the
// blueprint's: launch, session/new _meta, the config option.
func (s *Server) levels(meta *outputspec.Level, config string) outputspec.Levels {
	return outputspec.Levels{Launch: s.launchLevel, SessionMeta: meta, ConfigOption: config}
}

// compile compiles the agent's contracts under levels, logging what they
// retire. A failure is the request's fault: -32602 with the compiler's
// one-line message.
func (s *Server) compile(levels outputspec.Levels) (*blueprint.Outputs, error) {
	outs, err := blueprint.CompileOutputs(s.opts.Agent, levels)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	for _, w := range outs.Warnings {
		s.log.Warn(w)
	}
	return outs, nil
}

// shapes refuses what field would give: an output spec for an agent that
// gives no answer, which it would never shape (DESIGN §15, honest
// capability; the launch's --output-* are refused at start-up).
func (s *Server) shapes(field string) error {
	if err := s.opts.Agent.CheckAnswers(); err != nil {
		return fmt.Errorf("%w: %s: %v, so it has nothing to shape", ErrInvalidParams, field, err)
	}
	return nil
}

// newSession handles session/new. A _meta.coda.output whose compile reads
// files (compileReadsFiles) is compiled off the read loop (aside): the
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
		if err := s.shapes("_meta.coda.output"); err != nil {
			return nil, err
		}
	}
	_, listed := s.listed()
	if waitList := s.opts.Discover != nil && !listed; waitList || raw != nil && s.compileReadsFiles(raw) {
		// Off the read loop: the providers' list, waited for briefly
		// (listed.go), or the files the spec names.
		return aside(ctx, r, nil, func(ctx context.Context) (*newSessionResponse, error) {
			if waitList {
				s.awaitListedFor(ctx, newSessionListWait)
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
		if sess.meta, err = s.metaLevel(raw, sess.cwd); err != nil {
			return nil, err
		}
		sess.metaRaw = raw
	}
	if sess.outputs, err = s.sessionOutputs(sess.meta, ""); err != nil {
		return nil, err
	}
	sess.id = s.opts.Engine.NewID("s")
	s.workspace(sess)
	if err := s.startMCP(sess, p.MCPServers); err != nil {
		return nil, err
	}

	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()

	warning := s.saveSession(sess, nil)
	res := s.sessionResponse(sess, warning)
	r.Then(s.announce(sess, res.Meta))
	return &newSessionResponse{Meta: res.Meta, ConfigOptions: res.ConfigOptions, Modes: res.Modes, SessionID: sess.id}, nil
}

// namesFiles reports whether a _meta.coda.output spec names files coda
// reads (schemaFile, validator): a request that gives one reads them off
// the read loop, so that a file system that hangs holds up no other
// message (namedfile bounds the wait, not the loop's).
func namesFiles(raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	spec, err := outputspec.ParseMeta(raw)
	return err == nil && (spec.SchemaFile != "" || spec.Validator != "")
}

// metaLevel is a _meta.coda.output spec as a level of the cascade, its
// paths resolved in the session's directory dir; unknown fields are
// errors, and so is a schemaFile or validator that is a private file
// (privateFile), refused unread.
func (s *Server) metaLevel(raw json.RawMessage, dir string) (*outputspec.Level, error) {
	spec, err := outputspec.ParseMeta(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	for field, p := range map[string]string{"schemaFile": spec.SchemaFile, "validator": spec.Validator} {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if name, private := s.privateFile(p, dir); private {
			return nil, fmt.Errorf("%w: _meta.coda.output.%s: %s is a private file (the taint gate's private paths), so coda does not read it", ErrInvalidParams, field, name)
		}
	}
	l := &outputspec.Level{Dir: dir, Spec: spec}
	// The caller's own schema and validator: refused here, before any
	// model call, not failed open as a blueprint's are (DESIGN §19).
	var ce *outputspec.CallerError
	if err := outputspec.CheckCaller(*l); errors.As(err, &ce) {
		field := "_meta.coda.output" // the message names the file
		if ce.Field == "schema" {
			field += ".schema"
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidParams, field, ce.Err)
	}
	return l, nil
}

// sessionOutputs are the contracts a session's levels give: the launch's,
// compiled once for every session, when it has no level of its own.
func (s *Server) sessionOutputs(meta *outputspec.Level, config string) (*blueprint.Outputs, error) {
	if meta == nil && config == "" {
		return s.launchOutputs, nil
	}
	return s.compile(s.levels(meta, config))
}

// formatChoices are the output_format option's values: the picker's
// formats, in its order.
var formatChoices = func() []selectOption {
	var o []selectOption
	for _, f := range validators.PickerFormats() {
		o = append(o, selectOption{f.Label, f.Title})
	}
	return o
}()

// formatOption is the output_format config option, showing the format in
// effect.
func (s *Server) formatOption(outs *blueprint.Outputs) configOption {
	current := ""
	if c := outs.Lead(s.opts.Agent); c != nil {
		current = c.Format()
	}
	opt := configOption{
		ID: "output_format", Name: "Answer format", Category: "_output", Type: "select",
		Description:  "The format of the final answer coda closes each turn with",
		CurrentValue: current, Options: formatChoices,
	}
	found := false
	for _, o := range formatChoices {
		found = found || o.Value == current
	}
	if !found && current != "" {
		opt.Options = append(append([]selectOption(nil), formatChoices...), selectOption{current, current})
	}
	return opt
}

// session is the open session id names.
func (s *Server) session(id string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading[id] != nil {
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
		return nil, fmt.Errorf("%w: value: %s takes a string value such as %q", ErrInvalidParams, *p.ConfigID, optionExample(*p.ConfigID))
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
		if w := s.saveSession(sess, nil); w != "" {
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
		return strings.HasPrefix(value, "script:") && strings.HasPrefix(s.launchModel(), "script:")
	case optionFormat:
		return s.compileReadsFiles(sess.metaRaw)
	}
	return false
}

// compileReadsFiles reports whether compiling a session's contracts reads
// files: its _meta.coda.output (raw) names one, or the launch's spec or
// the blueprint's does.
func (s *Server) compileReadsFiles(raw json.RawMessage) bool {
	return s.launchNamesFiles || namesFiles(raw)
}

// namesFilesAtLaunch reports whether the launch's spec or the agent's
// outputs name a schema file or a validator, which every compile reads.
func namesFilesAtLaunch(launch outputspec.Spec, agent *blueprint.Blueprint) bool {
	specs := []*outputspec.Spec{&launch, agent.Agent.Output}
	for _, st := range agent.Stages {
		specs = append(specs, st.Output)
	}
	for _, spec := range specs {
		if spec != nil && (spec.SchemaFile != "" || spec.Validator != "") {
			return true
		}
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
	s.afterTurn(sess, s.stopMCP(sess), func() { answer.Reply(&closeSessionResponse{}) })
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
	s.dropQueue(sess)
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
	s.mu.Lock()
	sess := s.prompts[key]
	s.mu.Unlock()
	if sess != nil && !s.dropQueued(sess, key) {
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
