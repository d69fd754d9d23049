package acp

import (
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/fileuri"
)

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
