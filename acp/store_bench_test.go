package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
)

// benchClient serves srv over pipes and sends requests one at a time,
// reading coda's lines until each one's answer.
type benchClient struct {
	w     io.Writer
	lines *bufio.Scanner
	id    int
}

func newBenchClient(b *testing.B, srv *Server) *benchClient {
	toServer, clientW := io.Pipe()
	clientR, fromServer := io.Pipe()
	go func() {
		srv.Serve(context.Background(), toServer, fromServer)
		fromServer.Close()
	}()
	b.Cleanup(func() { clientW.Close(); io.Copy(io.Discard, clientR) })
	sc := bufio.NewScanner(clientR)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	c := &benchClient{w: clientW, lines: sc}
	c.call(b, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	return c
}

// call sends a request and reads up to its answer; it returns how many
// lines came before it.
func (c *benchClient) call(b *testing.B, method, params string) int {
	c.id++
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, c.id)
	for n := 0; c.lines.Scan(); n++ {
		if line := c.lines.Text(); strings.HasPrefix(line, answer) {
			if strings.Contains(line, `"error"`) {
				b.Fatalf("%s: %s", method, line)
			}
			return n
		}
	}
	b.Fatalf("%s: no answer (%v)", method, c.lines.Err())
	return 0
}

// benchSession writes a session of n turns, each a prompt of a few lines
// and a closing answer of about 1.5 KiB with its _meta, as coda writes them.
func benchSession(b *testing.B, st *store, id, cwd string, turns int, updated time.Time) {
	answer := strings.Repeat("The config is parsed in cmd/coda/config.go, by loadConfig. ", 25)
	f := &sessionFile{Version: sessionFileVersion, ID: id, Cwd: cwd, Title: "Where is the config parsed?", CreatedAt: updated, UpdatedAt: updated, Options: storedOptions{Mode: modeAsk}}
	for i := range turns {
		closing := appendJSON(nil, map[string]any{
			"sessionUpdate": "agent_message_chunk", "messageId": fmt.Sprintf("m-%d", i),
			"content": map[string]any{"type": "text", "text": answer},
			"_meta": map[string]any{"coda": map[string]any{"phase": "final_answer", "format": "markdown", "stage": "answer",
				"runId": fmt.Sprintf("r-%d", i), "flags": []string{}, "truncated": false, "artifacts": []any{}}},
		})
		ex := storedExchange{
			Prompt:  []shownBlock{{Type: "text", Text: fmt.Sprintf("Question %d: where is the config parsed,\nand what does it check?", i)}},
			History: engine.Exchange{Prompt: fmt.Sprintf("Question %d: where is the config parsed?", i), Answer: answer},
			RunID:   fmt.Sprintf("r-%d", i), Closing: []json.RawMessage{closing},
		}
		raw, _ := json.Marshal(ex)
		f.Exchanges = append(f.Exchanges, raw)
	}
	if err := st.write(f); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSessionLoad_200turns: session/load of a 200-turn session, from
// the request to its answer, which follows the last replayed update.
func BenchmarkSessionLoad_200turns(b *testing.B) {
	state, cwd := b.TempDir(), b.TempDir()
	srv := testServer(b, state, Options{})
	benchSession(b, srv.store, "s-bench", cwd, 200, time.Now())
	srv, _ = NewServer(srv.opts)
	c := newBenchClient(b, srv)
	params := fmt.Sprintf(`{"sessionId":"s-bench","cwd":%q,"mcpServers":[]}`, cwd)
	b.ResetTimer()
	for b.Loop() {
		if n := c.call(b, "session/load", params); n < 400 {
			b.Fatalf("session/load replayed %d lines, want 400", n)
		}
	}
}

// BenchmarkSessionList_1000: session/list over 1,000 sessions of 20 turns.
func BenchmarkSessionList_1000(b *testing.B) {
	state, cwd := b.TempDir(), b.TempDir()
	srv := testServer(b, state, Options{})
	base := time.Now()
	for i := range 1000 {
		benchSession(b, srv.store, fmt.Sprintf("s-%04d", i), cwd, 20, base.Add(-time.Duration(i)*time.Minute))
	}
	srv, _ = NewServer(srv.opts)
	c := newBenchClient(b, srv)
	params := fmt.Sprintf(`{"cwd":%q}`, cwd)
	b.ResetTimer()
	for b.Loop() {
		c.call(b, "session/list", params)
	}
}

// BenchmarkSessionNew is the reference the two above are read against: a
// session/new round trip over the same pipes, its file written.
func BenchmarkSessionNew(b *testing.B) {
	srv := testServer(b, b.TempDir(), Options{})
	srv, _ = NewServer(srv.opts)
	c := newBenchClient(b, srv)
	params := fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, b.TempDir())
	b.ResetTimer()
	for b.Loop() {
		c.call(b, "session/new", params)
	}
}

// BenchmarkSaveSession_200turns: what a turn's save costs in a session of
// 200 turns (the file rewritten with its exchanges; none added, so each
// iteration saves the same file). Read against BenchmarkSessionNew.
func BenchmarkSaveSession_200turns(b *testing.B) {
	srv := testServer(b, b.TempDir(), Options{})
	id := handle(b, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, b.TempDir())).SessionID
	sess := srv.sessions[id]
	benchSession(b, srv.store, id, sess.cwd, 200, time.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if w := srv.saveSession(sess, nil); w != "" {
			b.Fatal(w)
		}
	}
}
