package acp

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/jsonrpc"
)

// chunkUpdate is a streamed text chunk's session/update as encoding/json
// would write it from a struct: the library path the update sink's
// appending stands for.
type chunkUpdate struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			MessageID     string `json:"messageId"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Meta struct {
				Coda struct {
					Phase string `json:"phase"`
					Stage string `json:"stage"`
				} `json:"coda"`
			} `json:"_meta"`
		} `json:"update"`
	} `json:"params"`
}

// BenchmarkUpdateSink_chunk measures encoding and writing one streamed text
// chunk as a session/update, the hot path of a turn: by the update sink
// (append), and by encoding/json from a struct into a reused buffer
// (encoding-json), written the same way. The two lines are checked equal
// first.
func BenchmarkUpdateSink_chunk(b *testing.B) {
	out := jsonrpc.NewConn(jsonrpc.Options{}, strings.NewReader(""), io.Discard)
	defer out.Close()
	k := &updateSink{out: out, sessionID: "s-7f3a"}
	ev := engine.Event{Kind: engine.EventText, Stage: "answer", MessageID: "m-1", Text: "chunk 000123 of the stream, with \"quotes\" "}
	ctx := context.Background()

	var u chunkUpdate
	u.JSONRPC, u.Method = "2.0", "session/update"
	u.Params.SessionID = k.sessionID
	u.Params.Update.SessionUpdate = "agent_message_chunk"
	u.Params.Update.MessageID = ev.MessageID
	u.Params.Update.Content.Type = "text"
	u.Params.Update.Content.Text = ev.Text
	u.Params.Update.Meta.Coda.Phase = "commentary"
	u.Params.Update.Meta.Coda.Stage = ev.Stage
	if err := k.Emit(ctx, ev); err != nil {
		b.Fatal(err)
	}
	if lib, err := jsonrpc.EncodeJSON(nil, &u); err != nil || string(lib) != string(k.buf) {
		b.Fatalf("encoding/json writes %s (%v)\nthe sink writes %s", lib, err, k.buf)
	}

	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := k.Emit(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			u.Params.Update.Content.Text = ev.Text
			line, err := jsonrpc.EncodeJSON(buf[:0], &u)
			if err != nil {
				b.Fatal(err)
			}
			buf = line
			if err := out.Write(line); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	})
}
