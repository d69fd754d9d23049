package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/internal/namedfile"
	"github.com/coda-acp/coda/store"
)

// The files a client names for coda to read (_meta.coda.output's schemaFile
// and validator, a script: model) are read only when they are regular
// files within a size: /dev/zero, /dev/stdin (coda's own ACP input) and a
// 256 MiB file are refused without being read, and coda serves on. A private
// file is refused unread, so no error quotes it; a script: model is a
// client's to pick (set_config_option, /model) only when the launch's is
// one, [picker] models or not.
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
	picked := filepath.Join(work, "picked.toml")
	if err := os.WriteFile(picked, []byte("[[turn]]\ntext = \"ok\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
		m := &acptest.Models{CheckFunc: func(spec string) error {
			// as cmd/coda's does: the model is opened
			if path, ok := strings.CutPrefix(spec, "script:"); ok {
				_, err := script.Open(path)
				return err
			}
			return nil
		}}
		opts := acp.Options{Models: m}
		if launch != "" {
			opts.UserModel = launch
		}
		// [picker] listing a script model does not let a client pick one
		// when the launch's model is not a script model.
		m.PickerModels = []string{"script:" + picked}
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
			`{"jsonrpc":"2.0","id":9,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"script:` + picked + `"}}`,
			`await "id":9`,
			`{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"/model script:` + picked + `"}]}}`,
			`await "id":10`,
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
		// Most of what is counted is the test client's own: it checks
		// every message it reads against ACP's schema, some 50 MiB here,
		// and 100 under -race. Reading the 256 MiB file would be more.
		if allocated > 200<<20 {
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
				`"id":8,"error":{"code":-32602,"message":"invalid params: model \"script:`+filepath.Join(work, ".env")+`\": script models are for tests`,
				`"id":9,"error":{"code":-32602,"message":"invalid params: model \"script:`+picked+`\": script models are for tests, and only when coda was launched with one`,
				`"text":"model \"script:`+picked+`\": script models are for tests, and only when coda was launched with one`)
		} else {
			wants = append(wants,
				`"id":7,"error":{"code":-32602,"message":"invalid params: script model: /dev/zero: not a regular file`,
				`"id":8,"error":{"code":-32602,"message":"invalid params: model \"script:`+filepath.Join(work, ".env")+`\": `+filepath.Join(work, ".env")+` is a private file`,
				`"id":9,"result":{"configOptions":`,
				`"text":"Model: script:`+picked+`.`)
		}
		if l := received(c, `"id":6,`); launch == "" && strings.Contains(l, picked) {
			t.Errorf("launch %q: the model option offers a script model a client may not pick: %s", launch, l)
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

// The option changes that read files a client names are made off the read
// loop too (issue 24, case 2), in their session's order: while a script:
// model's file is being read (a file system that hangs, held here) for
// set_config_option, /model, or a schema file for a format change that
// recompiles it (set_config_option, /format), a request about another
// session is answered; the session's own later messages — set_mode, a
// prompt, a cancel of that prompt — wait, and are handled after the
// change's answer in the order they came: the prompt runs, then is
// cancelled.
func TestSession_namedFilesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		work := t.TempDir()
		for name, data := range map[string]string{
			"launch.toml": "[[turn]]\ntext = \"ok\"\n",
			"picked.toml": "[[turn]]\ntext = \"ok\"\n",
			"s.json":      `{"type":"object"}`,
		} {
			if err := os.WriteFile(filepath.Join(work, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var held atomic.Pointer[chan struct{}]
		namedfile.BeforeRead = func(path string) {
			if g := held.Load(); g != nil && (filepath.Base(path) == "picked.toml" || filepath.Base(path) == "s.json") {
				<-*g
			}
		}
		t.Cleanup(func() { namedfile.BeforeRead = nil })
		modelRelease := make(chan struct{})
		srv, err := acp.NewServer(acp.Options{
			Agent: testAgent(t), UserModel: "script:" + filepath.Join(work, "launch.toml"),
			Engine: &engine.Engine{Models: oneModel{heldModel{modelRelease}}, IDs: counter(), Store: store.New(t.TempDir())},
			Models: &acptest.Models{CheckFunc: func(spec string) error {
				_, err := script.Open(strings.TrimPrefix(spec, "script:")) // as cmd/coda's does
				return err
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, served := serve(t, context.Background(), srv, work, nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`await "id":1`)
		c.do(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[],"_meta":{"coda":{"output":{"format":"json","schemaFile":"s.json"}}}}}`)
		c.do(`await "id":2`)
		c.do(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`await "id":3`)
		picked := "script:" + filepath.Join(work, "picked.toml")
		other := 100
		for _, change := range []struct{ session, line string }{
			{"s-1", `"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"` + picked + `"}`},
			{"s-1", `"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"/model ` + picked + `"}]}`},
			{"s-2", `"method":"session/set_config_option","params":{"sessionId":"s-2","configId":"output_format","value":"json"}`},
			{"s-2", `"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"/format json"}]}`},
		} {
			release := make(chan struct{})
			held.Store(&release)
			other++
			id := other * 10
			c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, change.line))
			// The session's own: wait for the change.
			c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/set_mode","params":{"sessionId":%q,"modeId":"read-only"}}`, id+1, change.session))
			c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, id+2, change.session))
			c.do(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, change.session))
			// Another session's: answered meanwhile.
			c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/set_mode","params":{"sessionId":"s-3","modeId":"ask"}}`, id+3))
			c.do(fmt.Sprintf(`await "id":%d`, id+3))
			synctest.Wait()
			for _, n := range []int{id, id + 1, id + 2} {
				if l := received(c, fmt.Sprintf(`"id":%d,`, n)); l != "" {
					t.Errorf("%s: answered while the change's file was still being read: %s", change.line, l)
				}
			}
			close(release)
			synctest.Wait()
			lines, _ := c.lines()
			at := func(n int) int {
				for i, l := range lines {
					if strings.Contains(l, fmt.Sprintf(`"id":%d,`, n)) {
						return i
					}
				}
				return -1
			}
			answered, mode, prompt := at(id), at(id+1), at(id+2)
			if answered < 0 || mode < answered || prompt < mode {
				t.Errorf("%s: the change answered at line %d, the set_mode at %d, the prompt at %d; want them in that order:\n%s", change.line, answered, mode, prompt, strings.Join(lines, "\n"))
			}
			if l := lines[max(answered, 0)]; !strings.Contains(l, `"result"`) {
				t.Errorf("the change: %s", l)
			}
			if prompt >= 0 && !strings.Contains(lines[prompt], `"stopReason":"cancelled"`) {
				t.Errorf("the prompt queued before its cancel: %s, want it cancelled", lines[prompt])
			}
		}
		close(modelRelease)
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
	})
}
