package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine/provider/script"
)

// The files a client names for coda to read (_meta.coda.output's schemaFile
// and validator, a script: model) are read only when they are regular
// files within a size: /dev/zero, /dev/stdin (coda's own ACP input) and a
// 256 MiB file are refused without being read, and coda serves on. A private
// file is refused unread, so no error quotes it; a script: model is a
// client's to pick only when the launch's is one.
func TestSession_namedFiles(t *testing.T) {
	work := t.TempDir()
	big := filepath.Join(work, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	if err := os.WriteFile(filepath.Join(work, ".env"), []byte("API_KEY="+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	newSession := func(id int, output string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/new", "params": map[string]any{
			"cwd": work, "mcpServers": []any{}, "_meta": map[string]any{"coda": map[string]any{"output": json.RawMessage(output)}}}})
		return string(b)
	}
	for _, launch := range []string{"", "script:" + filepath.Join(work, "launch.toml")} {
		opts := acp.Options{CheckModel: func(spec string) error {
			// as cmd/coda's does: the model is opened
			if path, ok := strings.CutPrefix(spec, "script:"); ok {
				_, err := script.Open(path)
				return err
			}
			return nil
		}}
		if launch != "" {
			opts.UserModel = launch
		}
		c, served := serve(t, context.Background(), authServer(t, opts), work, nil)
		lines := []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
			newSession(1, `{"format":"json","schemaFile":"big.json"}`),
			newSession(2, `{"format":"json","schemaFile":"/dev/zero"}`),
			newSession(3, `{"format":"json","validator":"/dev/stdin"}`),
			newSession(4, `{"format":"json","schemaFile":".env"}`),
			newSession(5, `{"format":"json","validator":".env"}`),
			`{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`,
			`await "id":6`,
			`{"jsonrpc":"2.0","id":7,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"script:/dev/zero"}}`,
			`{"jsonrpc":"2.0","id":8,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"script:` + filepath.Join(work, ".env") + `"}}`,
			`await "id":8`,
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, line := range lines {
			c.do(line)
		}
		runtime.ReadMemStats(&after)
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("launch %q: the requests allocated %.1f MiB", launch, float64(allocated)/(1<<20))
		if allocated > 100<<20 {
			t.Errorf("the requests allocated %d MiB: a 256 MiB schema file was read", allocated>>20)
		}
		wants := []string{
			`"id":1,"error":{"code":-32602,"message":"invalid params: _meta.coda.output: schema file ` + big + `: too large: over the 4.0 MB coda reads of such a file"`,
			`"id":2,"error":{"code":-32602,"message":"invalid params: _meta.coda.output: schema file /dev/zero: not a regular file`,
			`"id":3,"error":{"code":-32602,"message":"invalid params: _meta.coda.output: validator /dev/stdin: not a regular file`,
			`"id":4,"error":{"code":-32602,"message":"invalid params: _meta.coda.output.schemaFile: .env is a private file`,
			`"id":5,"error":{"code":-32602,"message":"invalid params: _meta.coda.output.validator: .env is a private file`,
			`"id":6,"result":`,
		}
		if launch == "" {
			wants = append(wants,
				`"id":7,"error":{"code":-32602,"message":"invalid params: model \"script:/dev/zero\": script models are for tests, and only when coda was launched with one`,
				`"id":8,"error":{"code":-32602,"message":"invalid params: model \"script:`+filepath.Join(work, ".env")+`\": script models are for tests`)
		} else {
			wants = append(wants,
				`"id":7,"error":{"code":-32602,"message":"invalid params: script model: /dev/zero: not a regular file`,
				`"id":8,"error":{"code":-32602,"message":"invalid params: model \"script:`+filepath.Join(work, ".env")+`\": `+filepath.Join(work, ".env")+` is a private file`)
		}
		got, _ := c.lines()
		for _, want := range wants {
			if received(c, want) == "" {
				t.Errorf("launch %q: coda never sent %s; it sent:\n%s", launch, want, strings.Join(got, "\n"))
			}
		}
		for _, l := range got {
			if strings.Contains(l, "4f9a8b7c6d5e") {
				t.Errorf("a reply quotes the private file: %s", l)
			}
		}
	}
}
