package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/provider/sse"
)

const benchDeltas = 10_000

// benchBody is a 10,000-delta stream in the shape OpenAI sends (the chunks
// of testdata/text.sse), ending with a usage chunk and [DONE].
func benchBody() []byte {
	var b bytes.Buffer
	words := []string{"The", " module", " checks", " the", " token", " before", " it", " reads", " the", " session."}
	for i := range benchDeltas {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-CZ2","object":"chat.completion.chunk","created":1764495600,"model":"gpt-5.1-2025-11-13","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":null,"obfuscation":"b"}`+"\n\n", words[i%len(words)])
	}
	b.WriteString(`data: {"id":"chatcmpl-CZ2","object":"chat.completion.chunk","created":1764495600,"model":"gpt-5.1-2025-11-13","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-CZ2","object":"chat.completion.chunk","created":1764495600,"model":"gpt-5.1-2025-11-13","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10000,"total_tokens":10019}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkStream is the provider's cost per streamed delta: SSE framing,
// JSON decoding and the call to onDelta, over an in-memory body.
func BenchmarkStream(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	n := 0
	onDelta := func(d engine.Delta) error { n++; return nil }
	for b.Loop() {
		started := false
		s := stream{onDelta: onDelta, started: &started}
		resp, err := s.read(sse.NewReader(bytes.NewReader(body)))
		if err != nil || resp.Usage.OutputTokens != benchDeltas {
			b.Fatal(err, resp)
		}
	}
	reportPerDelta(b, n)
}

// BenchmarkStream_http is the same over a local HTTP server, request
// encoding and all.
func BenchmarkStream_http(b *testing.B) {
	body := benchBody()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	m := New("gpt-5.1", Options{BaseURL: srv.URL, Client: srv.Client()})
	req := &engine.Request{System: "Be brief.", Messages: []engine.Message{{Role: engine.RoleUser, Text: strings.Repeat("x", 100)}}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := m.Stream(context.Background(), req, func(engine.Delta) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	reportPerDelta(b, n)
}

func reportPerDelta(b *testing.B, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "deltas/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/delta")
}
