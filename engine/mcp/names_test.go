package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine"
)

func conn(server string, tools ...string) *Conn {
	c := &Conn{server: Server{Name: server}}
	for _, t := range tools {
		c.tools = append(c.tools, &sdk.Tool{Name: t})
	}
	return c
}

// Names are SERVER__TOOL in the characters providers take, at most 64
// long, unique in the session whatever order the servers came in.
func TestTools_names(t *testing.T) {
	long := strings.Repeat("x", 70)
	builtin := map[string]engine.Tool{"git__status": nil}
	type want struct{ server, tool string }
	tests := []struct {
		conns []*Conn
		names map[string]want
	}{{
		conns: []*Conn{conn("My Server", "search.files", "créer")},
		names: map[string]want{"My_Server__search_files": {"My Server", "search.files"}, "My_Server__cr_er": {"My Server", "créer"}},
	}, {
		// "a b" and "a.b" both come out a_b: the first by name keeps it.
		conns: []*Conn{conn("a.b", "t"), conn("a b", "t")},
		names: map[string]want{"a_b__t": {"a b", "t"}, "a_b__t_2": {"a.b", "t"}},
	}, {
		conns: []*Conn{conn("srv", long, long+"y")},
		names: map[string]want{"srv__" + long[:59]: {"srv", long}, "srv__" + long[:57] + "_2": {"srv", long + "y"}},
	}, {
		conns: []*Conn{conn("git", "status"), conn("", "x")},
		names: map[string]want{"git__status_2": {"git", "status"}, "___x": {"", "x"}},
	}}
	for _, tt := range tests {
		m := map[string]engine.Tool{}
		for k, v := range builtin {
			m[k] = v
		}
		Tools(tt.conns, m)
		if len(m) != len(tt.names)+len(builtin) {
			t.Errorf("%d tools: %v", len(m), keys(m))
		}
		for name, w := range tt.names {
			tool, ok := m[name].(*Tool)
			if !ok {
				t.Errorf("no tool %q in %v", name, keys(m))
				continue
			}
			if s, n := tool.MCP(); s != w.server || n != w.tool || tool.Spec().Name != name || len(name) > maxName {
				t.Errorf("%s is %s/%s (spec name %q)", name, s, n, tool.Spec().Name)
			}
		}
	}
}

func keys(m map[string]engine.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A result's text is cut at 64 KiB, at a character boundary, saying how
// much was left out.
func TestResultText_cut(t *testing.T) {
	big := strings.Repeat("é", maxOutput) // 2 bytes each
	got := resultText(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: big}}})
	if !strings.HasPrefix(got, strings.Repeat("é", maxOutput/2)) || !strings.HasSuffix(got, "[… 65536 more bytes of the result cut]") {
		t.Errorf("cut result ends %q", got[len(got)-60:])
	}
	got = resultText(&sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}})
	if got != `{"n":1}` {
		t.Errorf("structured content alone = %q", got)
	}
	got = resultText(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", Text: "hello"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 3000)}},
		&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
	}})
	want := "<resource uri=\"file:///a.txt\">\nhello\n</resource>\n[resource file:///a.bin, application/octet-stream, 3 KB]\n[audio audio/wav, 10 bytes]"
	if got != want {
		t.Errorf("resources = %q, want %q", got, want)
	}
}
