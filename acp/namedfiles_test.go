package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/internal/namedfile"
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

// A file a client names is read off the read loop: while session/new's
// schema file is being read (a file system that hangs, held here until the
// test lets it go), the next request is answered; then the session opens.
// So is a prompt's own spec naming one (a validator): the prompt's turn
// reads it, and a request about another session is answered meanwhile.
func TestSession_namedFilesOffTheReadLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "s.json"), []byte(`{"type":"object"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "v.star"), []byte("def validate(content):\n    return None\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var held atomic.Pointer[chan struct{}] // reading s.json waits until it is closed
		namedfile.BeforeRead = func(path string) {
			if g := held.Load(); g != nil && (filepath.Base(path) == "s.json" || filepath.Base(path) == "v.star") {
				<-*g
			}
		}
		t.Cleanup(func() { namedfile.BeforeRead = nil })
		c, served := serve(t, context.Background(), authServer(t, acp.Options{UserModel: "script:ok"}), work, nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		for _, req := range []struct{ id, line string }{
			{"1", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[],"_meta":{"coda":{"output":{"format":"json","schemaFile":"s.json"}}}}}`},
			{"3", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"hi"}],"_meta":{"coda":{"output":{"format":"markdown","validator":"v.star"}}}}}`},
		} {
			release := make(chan struct{})
			held.Store(&release)
			c.do(req.line)
			if req.id == "1" {
				c.do(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`)
				c.do(`await "id":2`)
			} else {
				c.do(`{"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{"sessionId":"s-1","modeId":"read-only"}}`)
				c.do(`await "id":4`)
			}
			if l := received(c, `"id":`+req.id+`,`); l != "" {
				t.Errorf("request %s was answered while its file was still being read, before the next: %s", req.id, l)
			}
			close(release)
			c.do(`await "id":` + req.id)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		for _, want := range []string{`"id":1,"result":{`, `"id":2,"result":{"configOptions"`, `"id":3,"result":{"_meta":{"coda":{"finalOutput":{`} {
			if received(c, want) == "" {
				lines, _ := c.lines()
				t.Errorf("coda never sent %s; it sent:\n%s", want, strings.Join(lines, "\n"))
			}
		}
	})
}
