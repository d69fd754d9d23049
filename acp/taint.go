package acp

import (
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/fileuri"
)

// privateFile names the file at path when the taint gate's private paths
// hold it (the launch's and the agent's, whatever the policy), taken in a
// session whose directory is cwd: a file the client names for coda to read
// (a schema, a validator, a script model) is then refused unread, so that
// no error can quote it.
func (s *Server) privateFile(path, cwd string) (string, bool) {
	return taint.NewSecrets(s.opts.Engine.Taint, (*taint.Config)(s.opts.Agent.Agent.Taint), cwd, []string{cwd}).Private(path)
}

// promptSources are the prompt's embedded text resources, for the taint
// gate (engine.Turn.PromptSources): each by the path its URI names, with
// the text the model is given. A resource_link is not a source: it carries
// no content, and the model reads it with its tools, which report what they
// read.
func promptSources(blocks []contentBlock) []taint.Source {
	var out []taint.Source
	for _, c := range blocks {
		if c.Type != "resource" || c.Resource == nil || c.Resource.Text == nil {
			continue
		}
		if p := fileuri.Path(c.Resource.URI); p != "" {
			out = append(out, taint.Source{Path: p, Text: *c.Resource.Text})
		}
	}
	return out
}
