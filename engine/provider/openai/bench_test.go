package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
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

// bigReply is a reply of n deltas of about 40 bytes each (the shape of
// acpbench's 100k-chunk turn), generated as it is read so that the body
// itself takes no memory.
type bigReply struct {
	n, i     int
	buf, end []byte
}

func (r *bigReply) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		switch {
		case r.i < r.n:
			r.end = fmt.Appendf(r.end[:0], `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"chunk %06d of the streamed reply text.. "},"finish_reason":null}]}`+"\n\n", r.i)
		case r.i == r.n:
			r.end = append(r.end[:0], `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n"...)
		default:
			return 0, io.EOF
		}
		r.buf = r.end
		r.i++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// BenchmarkStream_memory reads a 100,000-delta reply (4.2 MB of text) and
// reports what its text costs the heap: peak-MB is the most the heap held
// above its level before the call (sampled every 1000 deltas, garbage not
// yet collected included: what the process's memory follows), kept-MB what
// the Response holds once the call is over, and B/op every byte allocated.
func BenchmarkStream_memory(b *testing.B) {
	const deltas = 100_000
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() float64 {
		metrics.Read(samples)
		return float64(samples[0].Value.Uint64())
	}
	b.ReportAllocs()
	var peak, kept float64
	for b.Loop() {
		runtime.GC()
		base := heap()
		top := base
		n := 0
		started := false
		s := stream{started: &started, onDelta: func(engine.Delta) error {
			if n++; n%1000 == 0 {
				top = max(top, heap())
			}
			return nil
		}}
		resp, err := s.read(sse.NewReader(&bigReply{n: deltas}))
		if err != nil || len(resp.Text) != deltas*42 {
			b.Fatal(err, len(resp.Text))
		}
		top = max(top, heap())
		runtime.GC()
		peak += top - base
		kept += heap() - base
		runtime.KeepAlive(resp)
	}
	b.ReportMetric(peak/float64(b.N)/1e6, "peak-MB")
	b.ReportMetric(kept/float64(b.N)/1e6, "kept-MB")
}
