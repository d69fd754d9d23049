package otlp

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestNewExporter_timeoutAndURL(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"} {
		t.Setenv(k, "")
	}
	e, err := newExporter(Config{Endpoint: "https://collector.example/base/"})
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "https://collector.example/base/v1/traces" || e.timeout != DefaultTimeout {
		t.Errorf("url %q timeout %v", e.url, e.timeout)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250")
	if e, err = newExporter(Config{Endpoint: "http://c:4318"}); err != nil || e.timeout != 250*time.Millisecond {
		t.Errorf("timeout %v, %v; want the traces one, 250ms", e.timeout, err)
	}
}

// A collector's partial success is an error naming the rejected spans.
func TestPartialSuccess(t *testing.T) {
	var ps []byte
	ps = protowire.AppendTag(ps, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, 3)
	ps = protowire.AppendTag(ps, 2, protowire.BytesType)
	ps = protowire.AppendString(ps, "too old")
	var resp []byte
	resp = protowire.AppendTag(resp, 9, protowire.BytesType) // unknown: skipped
	resp = protowire.AppendString(resp, "x")
	resp = protowire.AppendTag(resp, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, ps)
	if err := partialSuccess(resp); err == nil || !strings.Contains(err.Error(), "rejected 3 spans: too old") {
		t.Errorf("partial success: %v", err)
	}
	for _, ok := range [][]byte{nil, {0xff}, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), nil)} {
		if err := partialSuccess(ok); err != nil {
			t.Errorf("%x: %v", ok, err)
		}
	}
}
