package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/validators"
)

// A session is one conversation: its working directory, its output levels
// and its history. At most one prompt runs in it at a time.
type session struct {
	id  string
	cwd string
	ws  engine.Workspace

	mu sync.Mutex
	// meta is the session/new _meta.coda.output level; config the
	// output_format option's, once the user picks one.
	meta    *outputspec.Level
	config  string
	history []engine.Exchange
	// The running prompt, if any.
	cancel    context.CancelFunc
	promptKey string
}

// levels are the session's levels of the output cascade after the
// blueprint's: launch, session/new _meta, the config option.
func (s *Server) levels(sess *session) []outputspec.Level {
	levels := append([]outputspec.Level(nil), s.launchLevel...)
	if sess.meta != nil {
		levels = append(levels, *sess.meta)
	}
	if sess.config != "" {
		levels = append(levels, outputspec.Level{Name: "the session's output_format option", Spec: outputspec.Spec{Format: sess.config}})
	}
	return levels
}

func (s *Server) newSession(conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var p newSessionRequest
	if err := params(req, &p); err != nil {
		return nil, err
	}
	if p.Cwd == nil {
		return nil, missingField("cwd")
	}
	if !filepath.IsAbs(*p.Cwd) {
		return nil, fmt.Errorf("%w: cwd: %q is not an absolute path", ErrInvalidParams, *p.Cwd)
	}
	for i, d := range p.AdditionalDirectories {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: additionalDirectories[%d]: %q is not an absolute path", ErrInvalidParams, i, d)
		}
	}
	sess := &session{cwd: filepath.Clean(*p.Cwd)}
	if raw := p.Meta.output(); raw != nil {
		spec, err := parseOutput(raw)
		if err != nil {
			return nil, err
		}
		sess.meta = &outputspec.Level{Name: "session/new _meta.coda.output", Dir: sess.cwd, Spec: spec}
	}
	outs, err := engine.CompileOutputs(s.opts.Agent, s.levels(sess)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	for _, w := range outs.Warnings {
		s.log.Warn(w, "session", sess.id)
	}
	sess.id = s.opts.NewID("s")
	s.mu.Lock()
	caps := s.clientCaps
	s.mu.Unlock()
	sess.ws = newClientWorkspace(conn, sess.id, sess.cwd, p.AdditionalDirectories, caps)

	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()

	resp := map[string]any{
		"sessionId":     sess.id,
		"configOptions": []configOption{s.formatOption(outs)},
	}
	if len(outs.Warnings) > 0 {
		resp["_meta"] = map[string]any{"coda": map[string]any{"warnings": outs.Warnings}}
	}
	return resp, nil
}

// parseOutput reads a _meta.coda.output spec; unknown fields are errors.
func parseOutput(raw json.RawMessage) (outputspec.Spec, error) {
	spec, err := outputspec.ParseMeta(raw)
	if err != nil {
		return spec, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return spec, nil
}

// formatChoices are the output_format option's values, in offer order.
var formatChoices = []selectOption{
	{"markdown", "Markdown"}, {"json", "JSON"}, {"xml", "XML"}, {"csv", "CSV"},
	{"yaml", "YAML"}, {"toml", "TOML"}, {"text", "Text"},
}

// formatOption is the output_format config option, showing the format in
// effect.
func (s *Server) formatOption(outs *engine.Outputs) configOption {
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

func (s *Server) session(id *string) (*session, error) {
	if id == nil {
		return nil, missingField("sessionId")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[*id]
	if sess == nil {
		return nil, fmt.Errorf("%w: unknown session %q", ErrInvalidParams, *id)
	}
	return sess, nil
}

func (s *Server) setConfigOption(req *jsonrpc2.Request) (any, error) {
	var p setConfigOptionRequest
	if err := params(req, &p); err != nil {
		return nil, err
	}
	sess, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.ConfigID == nil {
		return nil, missingField("configId")
	}
	if *p.ConfigID != "output_format" {
		return nil, fmt.Errorf("%w: configId: coda has no option %q (it has output_format)", ErrInvalidParams, *p.ConfigID)
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil || strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("%w: value: output_format takes a format label such as \"json\"", ErrInvalidParams)
	}
	sess.mu.Lock()
	old := sess.config
	sess.config = validators.Canonical(value)
	levels := s.levels(sess)
	sess.mu.Unlock()
	outs, err := engine.CompileOutputs(s.opts.Agent, levels...)
	if err != nil {
		sess.mu.Lock()
		sess.config = old
		sess.mu.Unlock()
		return nil, fmt.Errorf("%w: value: %v", ErrInvalidParams, err)
	}
	resp := map[string]any{"configOptions": []configOption{s.formatOption(outs)}}
	if len(outs.Warnings) > 0 {
		for _, w := range outs.Warnings {
			s.log.Warn(w, "session", sess.id)
		}
		resp["_meta"] = map[string]any{"coda": map[string]any{"warnings": outs.Warnings}}
	}
	return resp, nil
}

func (s *Server) closeSession(req *jsonrpc2.Request) (any, error) {
	var p sessionRequest
	if err := params(req, &p); err != nil {
		return nil, err
	}
	sess, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	if sess.cancel != nil {
		sess.cancel()
	}
	sess.mu.Unlock()
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	return map[string]any{}, nil
}

// cancelSession handles session/cancel: the running prompt stops and is
// answered "cancelled".
func (s *Server) cancelSession(req *jsonrpc2.Request) {
	var p sessionRequest
	if params(req, &p) != nil || p.SessionID == nil {
		s.log.Warn("session/cancel without a sessionId")
		return
	}
	s.mu.Lock()
	sess := s.sessions[*p.SessionID]
	s.mu.Unlock()
	if sess == nil {
		s.log.Warn("session/cancel for an unknown session", "session", *p.SessionID)
		return
	}
	sess.mu.Lock()
	if sess.cancel != nil {
		sess.cancel()
	}
	sess.mu.Unlock()
}

// cancelRequest handles $/cancel_request: a running session/prompt with
// that id is cancelled. Other requests are answered before the next
// message is read, so there is nothing else to cancel.
func (s *Server) cancelRequest(req *jsonrpc2.Request) {
	var p cancelRequestNotification
	if params(req, &p) != nil {
		return
	}
	var id jsonrpc2.ID
	if err := json.Unmarshal(p.RequestID, &id); err != nil {
		var n int64
		if json.Unmarshal(p.RequestID, &n) != nil {
			return
		}
		id = jsonrpc2.ID{Num: uint64(n)}
	}
	s.mu.Lock()
	sess := s.prompts[idKey(id)]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	sess.mu.Lock()
	if sess.cancel != nil {
		sess.cancel()
	}
	sess.mu.Unlock()
}

// publicSpec is a spec as advertised: what a client needs to know of it.
func publicSpec(c *outputspec.Contract) map[string]any {
	spec := c.Spec()
	m := map[string]any{"format": c.Format()}
	if spec.Instructions != "" {
		m["instructions"] = spec.Instructions
	}
	if spec.Example != "" {
		m["example"] = spec.Example
	}
	if spec.Schema != nil || spec.SchemaFile != "" {
		m["jsonSchema"] = true
	}
	if spec.Validator != "" {
		m["validator"] = filepath.Base(spec.Validator)
	}
	return m
}
