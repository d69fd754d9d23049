package anthropic

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
// just the delta's text, a callback per piece). Each benchmark has a
// "provider" and a "relay" half, run side by side; the target is
// the provider's ns/delta no more than the relay's, and a call's fixed
// cost (BenchmarkCall) at most 1 ms over the relay's.

const benchDeltas = 10_000

// benchBody is a stream of n text deltas in the shape Anthropic sends
// them (testdata/text.sse's events), between message_start and
// message_stop.
func benchBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-5-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":19,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	words := []string{"The", " module", " checks", " the", " token", " before", " it", " reads", " the", " session."}
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", words[i%len(words)])
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	fmt.Fprintf(&b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":%d}}\n\n", n)
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// relay is the reference: a hand-written reader of the same stream.
func relay(r io.Reader, onDelta func(llm.Delta) error) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var text strings.Builder
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Text string `json:"text"`
		} `json:"delta"`
	}
	for {
		line, err := br.ReadSlice('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			ev.Delta.Text = ""
			if err := json.Unmarshal(data, &ev); err != nil {
				return "", err
			}
			if ev.Delta.Text != "" {
				text.WriteString(ev.Delta.Text)
				if err := onDelta(llm.Delta{Text: ev.Delta.Text}); err != nil {
					return "", err
				}
			}
			if ev.Type == "message_stop" {
				return text.String(), nil
			}
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
			if resp, err := s.response(); err != nil || resp.Usage.OutputTokens != benchDeltas {
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
// local HTTP server, the provider's Stream (request encoding with its
// cache breakpoints, headers, retry and time limits, the reply's
// assembly) against the relay's plain POST of the same body.
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
		m := New("claude-sonnet-5-5", Options{BaseURL: srv.URL, APIKey: testKey, Client: srv.Client()})
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
		b.ReportAllocs()
		for b.Loop() {
			payload, _ := json.Marshal(map[string]any{
				"model": "claude-sonnet-5-5", "max_tokens": DefaultMaxTokens, "stream": true, "system": req.System,
				"messages": []any{map[string]any{"role": "user", "content": req.Messages[0].Text}},
			})
			hr, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(payload))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("X-Api-Key", testKey)
			hr.Header.Set("Anthropic-Version", Version)
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
