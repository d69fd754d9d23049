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
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/provider/script"
)

// BenchmarkPromptCancel measures the time from a session/cancel written by
// the client to the prompt's "cancelled" answer read back, while the model
// is mid-stream (the design asks for it within 100 ms). It reports the
// mean as ms/cancel.
func BenchmarkPromptCancel(b *testing.B) {
	var sc strings.Builder
	for i := 0; i < b.N; i++ {
		sc.WriteString("[[turn]]\ndelay_ms = 5000\ntext = [\"a\", \"b\", \"c\"]\n")
	}
	parsed, err := script.Parse([]byte(sc.String()), "bench")
	if err != nil {
		b.Fatal(err)
	}
	agent, err := blueprint.Parse([]byte(defaultBlueprint), "bench")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := acp.NewServer(acp.Options{Agent: agent, UserModel: "script:bench", Engine: &engine.Engine{Models: oneModel{script.New("script:bench", parsed)}, IDs: counter()}})
	if err != nil {
		b.Fatal(err)
	}
	toServer, w := io.Pipe()
	r, fromServer := io.Pipe()
	go srv.Serve(context.Background(), toServer, fromServer)
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, 1<<20)
	send := func(s string) { fmt.Fprintln(w, s) }
	until := func(substr string) {
		for lines.Scan() {
			if strings.Contains(lines.Text(), substr) {
				return
			}
		}
		b.Fatalf("coda never sent %q", substr)
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	until(`"id":0`)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, b.TempDir()))
	until(`"id":1`)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := 100 + i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go"}]}}`, id))
		until(`"plan"`)
		start := time.Now()
		send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}`)
		until(fmt.Sprintf(`"id":%d,`, id))
		total += time.Since(start)
		if !strings.Contains(lines.Text(), `"stopReason":"cancelled"`) {
			b.Fatalf("the prompt was not answered cancelled: %s", lines.Text())
		}
	}
	b.StopTimer()
	w.Close()
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/cancel")
}
