package acp

import (
	"net/url"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// promptSources are the prompt's embedded text resources, for the taint
// gate (engine.Turn.PromptSources): each by the path its URI names, with
// the text the model is given. A resource_link is not a source: it carries
// no content, and the model reads it with its tools, which report what they
// read.
func promptSources(blocks []contentBlock) []engine.Source {
	var out []engine.Source
	for _, c := range blocks {
		if c.Type != "resource" || c.Resource == nil || c.Resource.Text == nil {
			continue
		}
		if p := uriPath(c.Resource.URI); p != "" {
			out = append(out, engine.Source{Path: p, Text: *c.Resource.Text})
		}
	}
	return out
}

// uriPath is the file path a resource URI names: a file: URI's path, or
// the path part of any other (a relative one is taken against the working
// directory by the gate).
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	if runtime.GOOS == "windows" && len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/x
	}
	if p == "" {
		return ""
	}
	return filepath.FromSlash(strings.TrimSpace(p))
}
