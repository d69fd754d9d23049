package acp

import (
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/coda-acp/coda/validators"
)

func (s *Server) initialize(req *jsonrpc2.Request) (any, error) {
	var p initializeRequest
	if err := params(req, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, missingField("protocolVersion")
	}
	s.mu.Lock()
	s.clientCaps = p.ClientCapabilities
	s.mu.Unlock()

	launch := map[string]any{}
	if c := s.launchOutputs.Lead(s.opts.Agent); c != nil {
		launch = publicSpec(c)
	}
	// The labels coda checks itself.
	var advertised []string
	for _, f := range validators.Formats() {
		if f.HasParser() {
			advertised = append(advertised, f.Label)
		}
	}
	version := s.opts.Version
	if version == "" {
		version = "dev"
	}
	// Whatever version the client asks for, coda answers with the one it
	// speaks; the client decides whether to go on.
	return map[string]any{
		"protocolVersion": ProtocolVersion,
		"agentInfo":       map[string]any{"name": "coda", "title": "coda", "version": version},
		"agentCapabilities": map[string]any{
			"loadSession":        false,
			"promptCapabilities": map[string]any{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities":    map[string]any{"http": true, "sse": false},
			"sessionCapabilities": map[string]any{
				"close":                 map[string]any{},
				"additionalDirectories": map[string]any{},
			},
			"_meta": map[string]any{"coda": map[string]any{
				"finalOutput": true,
				"formats":     advertised,
				"jsonSchema":  true,
				"validators":  []string{"starlark"},
				"output":      launch,
			}},
		},
		"authMethods": []any{},
	}, nil
}

// authenticate answers per the spec: coda advertises no auth methods, so
// every method id is unknown.
func (s *Server) authenticate(req *jsonrpc2.Request) (any, error) {
	var p authenticateRequest
	if err := params(req, &p); err != nil {
		return nil, err
	}
	if p.MethodID == nil {
		return nil, missingField("methodId")
	}
	return nil, fmt.Errorf("%w: methodId: coda needs no authentication and offers no method %q", ErrInvalidParams, *p.MethodID)
}
