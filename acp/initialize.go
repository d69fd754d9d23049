package acp

import (
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
	lead := s.launchOutputs.Lead(s.opts.Agent)
	if lead != nil {
		launch = publicSpec(lead)
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
			"loadSession":         s.keepsSessions(),
			"promptCapabilities":  map[string]any{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities":     map[string]any{"http": true, "sse": false},
			"sessionCapabilities": s.sessionCapabilities(),
			"_meta": map[string]any{"coda": map[string]any{
				"finalOutput": lead != nil, // an agent with no stage that answers gives none
				"formats":     advertised,
				"jsonSchema":  true,
				"validators":  []string{"starlark"},
				"output":      launch,
			}},
		},
		"authMethods": s.authMethods(),
	}, nil
}
