package otlp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coda-acp/coda/internal/telemetry/otlp"
	"github.com/coda-acp/coda/internal/telemetry/otlptest"
)

// The exporter's request is OTLP/HTTP protobuf, gzipped when the
// environment asks, with the environment's headers (percent-decoded) over
// the config's, at the traces endpoint the environment gives as is.
func TestExporter_gzipHeadersTracesEndpoint(t *testing.T) {
	clearEnv(t)
	rcv := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL+"/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // the traces one wins
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-key=a%20b, x-other = 2,malformed")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-key=general") // the traces one wins
	tr := newTracer(t, otlp.Config{Endpoint: "http://127.0.0.1:2", Headers: map[string]string{"x-key": "config", "x-config": "1"}, Version: "9.9"})
	turn(t, tr)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Spans()); n != 4 {
		t.Fatalf("the receiver decoded %d spans, want 4", n)
	}
	h := rcv.Headers()[0]
	for k, want := range map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip", "X-Key": "a b", "X-Other": "2", "X-Config": "", "User-Agent": "coda/9.9"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// A bad compression or timeout in the environment is New's error, not a
// silent default.
func TestExporter_badEnv(t *testing.T) {
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_COMPRESSION":    "zstd",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "ten",
		"OTEL_EXPORTER_OTLP_TIMEOUT":        "-5",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":    "/nonexistent/ca.pem",
	} {
		t.Run(k, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(k, v)
			if _, err := otlp.New(t.Context(), otlp.Config{Endpoint: "http://127.0.0.1:4318"}); err == nil {
				t.Errorf("%s=%s: no error", k, v)
			}
		})
	}
}

// OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends OTLP/JSON: ids in hex,
// kinds as numbers, 64-bit integers as strings.
func TestExporter_json(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	bodies := make(chan []byte, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/v1/traces" {
			t.Errorf("%s %s", r.Header.Get("Content-Type"), r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	tr := newTracer(t, otlp.Config{Endpoint: srv.URL})
	turn(t, tr)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	close(bodies)
	type span struct {
		TraceID      string `json:"traceId"`
		ParentSpanID string `json:"parentSpanId"`
		Name         string `json:"name"`
		Kind         int    `json:"kind"`
		Start        string `json:"startTimeUnixNano"`
		Attributes   []struct {
			Key   string         `json:"key"`
			Value map[string]any `json:"value"`
		} `json:"attributes"`
	}
	var req struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []span `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	spans := map[string]span{}
	for b := range bodies {
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = s
				}
			}
		}
	}
	turnSpan, chat := spans["invoke_agent reviewer"], spans["chat gpt-test"]
	if len(spans) != 4 || turnSpan.TraceID != "0af7651916cd43dd8448eb211c80319c" || turnSpan.ParentSpanID != "b7ad6b7169203331" {
		t.Fatalf("spans %v", spans)
	}
	if chat.Kind != 3 || chat.Start == "" || chat.Start == "0" {
		t.Errorf("chat: kind %d (want 3, client), start %q", chat.Kind, chat.Start)
	}
	for _, a := range chat.Attributes {
		if a.Key == "gen_ai.usage.input_tokens" && a.Value["intValue"] != "120" {
			t.Errorf("input tokens: %v", a.Value)
		}
	}
}
