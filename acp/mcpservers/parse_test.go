package mcpservers

import (
	"errors"
	"strings"
	"testing"

	"github.com/coda-acp/coda/internal/jsonrpc"
)

func TestParse(t *testing.T) {
	servers, warnings, err := Parse([]byte(`[
		{"name":"fs","command":"mcp-fs","args":["-v"],"env":[{"name":"K","value":"v"}]},
		{"type":"http","name":"web","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"x"}]},
		{"type":"sse","name":"old","url":"https://example.com/sse","headers":[]},
		{"name":"fs","command":"again"}
	]`), "/w")
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 {
		t.Fatalf("servers = %+v, want fs and web", servers)
	}
	fs, web := servers[0], servers[1]
	if fs.Name != "fs" || fs.Command != "mcp-fs" || fs.Dir != "/w" || len(fs.Args) != 1 || len(fs.Env) != 1 || fs.Env[0] != "K=v" {
		t.Errorf("stdio server = %+v", fs)
	}
	if web.URL != "https://example.com/mcp" || web.Headers.Get("Authorization") != "x" {
		t.Errorf("http server = %+v", web)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "SSE") || !strings.Contains(warnings[1], "same name") {
		t.Errorf("warnings = %q, want the SSE server's and the repeated name's", warnings)
	}
}

func TestParse_refused(t *testing.T) {
	for raw, field := range map[string]string{
		`{}`:                          "mcpServers",
		`[1]`:                         "mcpServers[0]",
		`[{"command":"x"}]`:           "mcpServers[0].name",
		`[{"name":"a","command":""}]`: "mcpServers[0].command",
		`[{"name":"a","command":"x","args":"-v"}]`:           "mcpServers[0].args",
		`[{"name":"a","command":"x","env":[{"value":"v"}]}]`: "mcpServers[0].env[0].name",
		`[{"type":"http","name":"a","url":"ftp://h"}]`:       "mcpServers[0].url",
		`[{"type":"ws","name":"a"}]`:                         "mcpServers[0].type",
	} {
		_, _, err := Parse([]byte(raw), "/w")
		if !errors.Is(err, jsonrpc.ErrInvalidParams) || !strings.Contains(err.Error(), field) {
			t.Errorf("Parse(%s) = %v, want -32602 naming %s", raw, err, field)
		}
	}
	if s, w, err := Parse([]byte(`null`), "/w"); s != nil || w != nil || err != nil {
		t.Errorf("Parse(null) = %v, %v, %v, want nothing", s, w, err)
	}
}
