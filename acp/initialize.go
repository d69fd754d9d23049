package acp

import (
	"context"

	"github.com/coda-acp/coda/validators"
)

func (s *Server) initialize(_ context.Context, _ *request[initializeResponse], p *initializeRequest) (*initializeResponse, error) {
	s.caps.Set(p.ClientCapabilities)

	var launch publicSpec
	lead := s.out.Launch().Lead(s.opts.Agent)
	if lead != nil {
		launch = publicSpecOf(lead)
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
	return &initializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       implementation{Name: "coda", Title: "coda", Version: version},
		AgentCapabilities: agentCapabilities{
			LoadSession:         s.load.keeps(),
			PromptCapabilities:  promptCapabilities{Image: true, Audio: false, EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: true, SSE: false},
			SessionCapabilities: s.load.sessionCapabilities(),
			Meta: codaMeta[codaCapabilities]{Coda: codaCapabilities{
				FinalOutput: lead != nil,
				Formats:     advertised,
				JSONSchema:  true,
				Validators:  []string{"starlark"},
				Output:      launch,
				// Prompts during a turn (queue.go).
				PromptQueueing: true,
				Steering:       true,
			}},
		},
		AuthMethods: authMethods(s.opts.Models, s.opts.UserModel, s.pick.Default(false)),
	}, nil
}
