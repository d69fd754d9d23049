package acp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// panicky panics inside a turn, as a bug in coda would.
type panicky struct{}

func (panicky) Name() string { return "panicky" }
func (panicky) Stream(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
	panic("a bug")
}

// A panic inside a turn is recovered and answered -32603; the session and
// the connection keep serving.
func TestServer_panicInTurn(t *testing.T) {
	agent, err := blueprint.Parse([]byte(defaultBlueprint), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := acp.NewServer(acp.Options{Agent: agent, UserModel: "panicky", Engine: &engine.Engine{Models: oneModel{panicky{}}, IDs: counter()}})
	if err != nil {
		t.Fatal(err)
	}
	toServer, w := io.Pipe()
	r, fromServer := io.Pipe()
	done := make(chan struct{})
	go func() { srv.Serve(context.Background(), toServer, fromServer); fromServer.Close(); close(done) }()
	lines := bufio.NewScanner(r)
	next := func(substr string) string {
		t.Helper()
		for lines.Scan() {
			acptest.Validate(t, lines.Bytes(), "")
			if strings.Contains(lines.Text(), substr) {
				return lines.Text()
			}
		}
		t.Fatalf("coda never sent %q", substr)
		return ""
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	next(`"id":0`)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", t.TempDir())
	next(`"id":1`)
	for id := 2; id <= 3; id++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go"}]}}`+"\n", id)
		line := next(fmt.Sprintf(`"id":%d,`, id))
		if !strings.Contains(line, `"code":-32603`) || !strings.Contains(line, "a bug") {
			t.Errorf("prompt %d answered %s, want -32603 naming the panic", id, line)
		}
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang detector, not a deadline
		t.Fatal("coda did not exit after stdin closed")
	}
}
