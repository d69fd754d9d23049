package gemini

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
// reads the same stream (lines, json.Unmarshal of each data line into
// just the text, a callback per piece). Each benchmark has a "provider"
// and a "relay" half, run side by side; the target is the
// provider's ns/delta no more than the relay's, and a call's fixed cost
// (BenchmarkCall) at most 1 ms over the relay's.

const benchDeltas = 10_000

// benchBody is a stream of n text chunks in the shape Gemini sends them
// (each with the usage so far and the model version, as the API does),
// then the finish.
func benchBody(n int) []byte {
	var b bytes.Buffer
	words := []string{"The", " module", " checks", " the", " token", " before", " it", " reads", " the", " session."}
	for i := range n {
		fmt.Fprintf(&b, `data: {"candidates": [{"content": {"parts": [{"text": %q}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 19,"candidatesTokenCount": %d,"totalTokenCount": %d},"modelVersion": "gemini-2.5-flash","responseId": "mX0taYSXJ5Cez7IPkp3L0Qs"}`+"\r\n\r\n", words[i%len(words)], i+1, i+20)
	}
	fmt.Fprintf(&b, `data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 19,"candidatesTokenCount": %d,"totalTokenCount": %d},"modelVersion": "gemini-2.5-flash","responseId": "mX0taYSXJ5Cez7IPkp3L0Qs"}`+"\r\n\r\n", n, n+19)
	return b.Bytes()
}

// relay is the reference: a hand-written reader of the same stream.
func relay(r io.Reader, onDelta func(llm.Delta) error) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var text strings.Builder
	var ev struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	for {
		line, err := br.ReadSlice('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			ev.Candidates = nil
			if err := json.Unmarshal(data, &ev); err != nil {
				return "", err
			}
			for _, c := range ev.Candidates {
				for _, p := range c.Content.Parts {
					if p.Text != "" {
						text.WriteString(p.Text)
						if err := onDelta(llm.Delta{Text: p.Text}); err != nil {
							return "", err
						}
					}
				}
			}
		}
		if err == io.EOF {
			return text.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// BenchmarkStream is the cost per streamed delta over an in-memory body:
// the provider's SSE framing, decoding and assembly against the relay's.
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
			if err := s.read(sse.NewReader(bytes.NewReader(body))); err != nil {
				b.Fatal(err)
			}
			if resp, err := s.response("gemini-2.5-flash"); err != nil || resp.Usage.OutputTokens != benchDeltas {
				b.Fatal(err, resp.Usage)
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
// local HTTP server, the provider's Stream (request encoding, headers,
// the retry and time limits, the reply's assembly) against the relay's
// plain POST of the same body.
func BenchmarkCall(b *testing.B) {
	body := benchBody(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	req := &llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 100)}}}
	b.Run("provider", func(b *testing.B) {
		m := New("gemini-2.5-flash", Options{BaseURL: srv.URL, APIKey: testKey, Client: srv.Client()})
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
		cpu := benchcpu.Start(b)
		url := srv.URL + "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
		b.ReportAllocs()
		for b.Loop() {
			payload, _ := json.Marshal(map[string]any{
				"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": req.System}}},
				"contents":          []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": req.Messages[0].Text}}}},
			})
			hr, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("X-Goog-Api-Key", testKey)
			resp, err := client.Do(hr)
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
