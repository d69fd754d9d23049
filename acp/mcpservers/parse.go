// Package mcpservers reads the mcpServers of ACP's session/new,
// session/load, session/resume and session/fork as engine/mcp's servers,
// naming a bad field -32602 (jsonrpc.ErrInvalidParams).
package mcpservers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/internal/jsonrpc"
)

// errInvalidParams is -32602, which a value of the wrong type wraps.
var errInvalidParams = jsonrpc.ErrInvalidParams

// Parse reads mcpServers as ACP gives them: stdio entries
// {name, command, args, env: [{name, value}]} and http ones {type: "http",
// name, url, headers: [{name, value}]}. A value of the wrong type is
// -32602 naming the field. What coda cannot use comes back as warnings: an
// SSE server (mcpCapabilities.sse is false), a name given twice.
func Parse(raw json.RawMessage, cwd string) ([]mcp.Server, []string, error) {
	if len(raw) == 0 || jsonrpc.IsNull(raw) {
		return nil, nil, nil
	}
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil, nil, fmt.Errorf("%w: mcpServers: expected an array of MCP servers", errInvalidParams)
	}
	var (
		servers  []mcp.Server
		warnings []string
		seen     = map[string]bool{}
	)
	for i, e := range entries {
		f, err := fieldsOf(e, fmt.Sprintf("mcpServers[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		name, err := f.str("name", true)
		if err != nil {
			return nil, nil, err
		}
		kind, err := f.str("type", false)
		if err != nil {
			return nil, nil, err
		}
		srv := mcp.Server{Name: name, Dir: cwd}
		switch kind {
		case "http", "sse":
			if srv.URL, err = f.str("url", true); err != nil {
				return nil, nil, err
			}
			if u, err := url.Parse(srv.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, nil, fmt.Errorf("%w: %s.url: %q is not an http or https URL", errInvalidParams, f.path, srv.URL)
			}
			headers, err := f.pairs("headers")
			if err != nil {
				return nil, nil, err
			}
			srv.Headers = http.Header{}
			for _, h := range headers {
				srv.Headers.Add(h[0], h[1])
			}
		case "", "stdio":
			if srv.Command, err = f.str("command", true); err != nil {
				return nil, nil, err
			}
			if srv.Args, err = f.strs("args"); err != nil {
				return nil, nil, err
			}
			env, err := f.pairs("env")
			if err != nil {
				return nil, nil, err
			}
			for _, v := range env {
				srv.Env = append(srv.Env, v[0]+"="+v[1])
			}
		default:
			return nil, nil, fmt.Errorf("%w: %s.type: unknown transport %q (coda takes stdio and http)", errInvalidParams, f.path, kind)
		}
		switch {
		case kind == "sse":
			warnings = append(warnings, fmt.Sprintf("MCP server %s was not started: coda does not speak MCP's SSE transport (mcpCapabilities.sse is false); give its streamable HTTP endpoint as type \"http\"", name))
		case seen[name]:
			warnings = append(warnings, fmt.Sprintf("MCP server %s was not started: an earlier server has the same name", name))
		default:
			seen[name] = true
			servers = append(servers, srv)
		}
	}
	return servers, warnings, nil
}

// fields are a JSON object's members, read with errors naming the field.
type fields struct {
	path string
	m    map[string]json.RawMessage
}

func fieldsOf(raw json.RawMessage, path string) (fields, error) {
	f := fields{path: path}
	if json.Unmarshal(raw, &f.m) != nil || f.m == nil {
		return f, fmt.Errorf("%w: %s: expected an object", errInvalidParams, path)
	}
	return f, nil
}

// str is a string member; a required one must be there and not empty.
func (f fields) str(key string, required bool) (string, error) {
	raw, ok := f.m[key]
	if !ok || jsonrpc.IsNull(raw) {
		if required {
			return "", fmt.Errorf("%w: %s.%s is required", errInvalidParams, f.path, key)
		}
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%w: %s.%s: expected a string", errInvalidParams, f.path, key)
	}
	if required && s == "" {
		return "", fmt.Errorf("%w: %s.%s is empty", errInvalidParams, f.path, key)
	}
	return s, nil
}

// strs is an optional array of strings.
func (f fields) strs(key string) ([]string, error) {
	raw, ok := f.m[key]
	if !ok || jsonrpc.IsNull(raw) {
		return nil, nil
	}
	var out []string
	if json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("%w: %s.%s: expected an array of strings", errInvalidParams, f.path, key)
	}
	return out, nil
}

// pairs is an optional array of {name, value} objects (env, headers).
func (f fields) pairs(key string) ([][2]string, error) {
	raw, ok := f.m[key]
	if !ok || jsonrpc.IsNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("%w: %s.%s: expected an array of {name, value} objects", errInvalidParams, f.path, key)
	}
	out := make([][2]string, 0, len(items))
	for j, item := range items {
		p, err := fieldsOf(item, fmt.Sprintf("%s.%s[%d]", f.path, key, j))
		if err != nil {
			return nil, err
		}
		name, err := p.str("name", true)
		if err != nil {
			return nil, err
		}
		value, err := p.str("value", false)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}
