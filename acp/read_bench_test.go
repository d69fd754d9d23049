package acp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/provider/script"
)

// BenchmarkServe_read measures a message from the line written by the
// client to coda's answer read back: the line read and screened, its
// envelope and params decoded, the method table's refusal written. A
// session/prompt for an unknown session is refused once its params are
// decoded, so what it costs is the read path's, with a small prompt and
// with a 1 MiB one (an editor's attached file).
//
//	go test ./acp -run '^$' -bench Serve_read -count 7 | benchstat -
func BenchmarkServe_read(b *testing.B) {
	for _, size := range []int{64, 1 << 20} {
		b.Run(fmt.Sprintf("prompt=%d", size), func(b *testing.B) {
			agent, err := blueprint.Parse([]byte(defaultBlueprint), "bench")
			if err != nil {
				b.Fatal(err)
			}
			srv, err := acp.NewServer(acp.Options{Agent: agent, Engine: &engine.Engine{Models: oneModel{script.New("script:bench", &script.Script{})}}})
			if err != nil {
				b.Fatal(err)
			}
			toServer, w := io.Pipe()
			r, fromServer := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(context.Background(), toServer, fromServer); fromServer.Close() }()
			lines := bufio.NewScanner(r)
			lines.Buffer(nil, 1<<20)
			unit := "a line of the attached file, with \"quotes\" and <tags>\n"
			text := strings.Repeat(unit, size/len(unit)+1)[:size]
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s-none","prompt":[{"type":"text","text":%q}]}}`+"\n", text)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				io.WriteString(w, line)
				if !lines.Scan() || !strings.Contains(lines.Text(), "unknown session") {
					b.Fatalf("no refusal: %q (%v)", lines.Text(), lines.Err())
				}
			}
			w.Close()
			if err := <-served; err != nil {
				b.Fatal(err)
			}
		})
	}
}
