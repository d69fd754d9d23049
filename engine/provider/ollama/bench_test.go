package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/internal/benchcpu"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// The stream's cost is measured against a relay: the plainest Go that
// reads the same stream (lines, json.Unmarshal of each into just the text,
// a callback per piece). Each benchmark has a "provider" and a "relay"
// half, run side by side in one run; issue 20's target is the provider's
// CPU per delta no more than the relay's (BenchmarkStream), and a call's
// fixed cost at most 1 ms over the relay's (BenchmarkCall, whose provider
// half asks /api/show once, as a process does, before the loop).

const benchDeltas = 10_000

// benchBody is a stream of n pieces in the shape Ollama sends them
// (testdata/chat_stream.ndjson), then the last line with the counts.
func benchBody(n int) []byte {
	var b bytes.Buffer
	words := []string{"The", " module", " checks", " the", " token", " before", " it", " reads", " the", " session."}
	for i := range n {
		fmt.Fprintf(&b, `{"model":"qwen3:8b","created_at":"2026-12-01T10:00:00.%06dZ","message":{"role":"assistant","content":%q},"done":false}`+"\n", i%1000000, words[i%len(words)])
	}
	fmt.Fprintf(&b, `{"model":"qwen3:8b","created_at":"2026-12-01T10:00:09.1Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":%d,"eval_duration":4535599000}`+"\n", n)
	return b.Bytes()
}

// relay is the reference: a hand-written reader of the same stream.
func relay(r io.Reader, onDelta func(llm.Delta) error) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var text strings.Builder
	var ev struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Done bool `json:"done"`
	}
	for {
		line, err := br.ReadSlice('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			ev.Message.Content = ""
			if err := json.Unmarshal(line, &ev); err != nil {
				return "", err
			}
			if t := ev.Message.Content; t != "" {
				text.WriteString(t)
				if err := onDelta(llm.Delta{Text: t}); err != nil {
					return "", err
				}
			}
		}
		if err == io.EOF || ev.Done {
			return text.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// BenchmarkStream is the cost per streamed delta over an in-memory body.
func BenchmarkStream(b *testing.B) {
	body := benchBody(benchDeltas)
	b.Run("provider", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		n := 0
		cpu := benchcpu.Start(b)
		for b.Loop() {
			started := false
			s := stream{onDelta: func(llm.Delta) error { n++; return nil }, started: &started}
			resp, err := s.read(sse.NewLineReader(bytes.NewReader(body)))
			if err != nil || resp.Usage.OutputTokens != benchDeltas {
				b.Fatal(err, resp)
			}
		}
		cpu.Report(n)
	})
	b.Run("relay", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		n := 0
		cpu := benchcpu.Start(b)
		for b.Loop() {
			if _, err := relay(bytes.NewReader(body), func(llm.Delta) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(n)
	})
}

// BenchmarkCall is the fixed cost of a call: a one-delta reply over a
// local HTTP server, the provider's Stream against the relay's plain POST
// of the same body.
func BenchmarkCall(b *testing.B) {
	body := benchBody(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/api/show" {
			io.WriteString(w, `{"model_info":{"general.architecture":"qwen3","qwen3.context_length":40960},"capabilities":["completion","tools","thinking"]}`)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write(body)
	}))
	defer srv.Close()
	req := &llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 100)}}}
	b.Run("provider", func(b *testing.B) {
		m := New("qwen3:8b", Options{BaseURL: srv.URL, Client: srv.Client()})
		if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu := benchcpu.Start(b)
		for b.Loop() {
			if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(0)
	})
	b.Run("relay", func(b *testing.B) {
		client := srv.Client()
		b.ReportAllocs()
		cpu := benchcpu.Start(b)
		for b.Loop() {
			payload, _ := json.Marshal(map[string]any{
				"model": "qwen3:8b", "stream": true, "options": map[string]any{"num_ctx": 40960},
				"messages": []any{map[string]any{"role": "system", "content": req.System}, map[string]any{"role": "user", "content": req.Messages[0].Text}},
			})
			resp, err := client.Post(srv.URL+"/api/chat", "application/json", bytes.NewReader(payload))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := relay(resp.Body, func(llm.Delta) error { return nil }); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		cpu.Report(0)
	})
}
