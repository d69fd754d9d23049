package otlp_test

import (
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
