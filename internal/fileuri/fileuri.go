// Package fileuri reads the file path a resource URI names: a prompt's
// embedded resources (acp) and an MCP tool result's (engine/mcp), for the
// taint gate.
package fileuri

import (
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
)

// Path is the file path a resource URI names: a file: URI's path, or the
// path part of any other (a relative one is taken against the working
// directory by the taint gate).
func Path(uri string) string {
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
