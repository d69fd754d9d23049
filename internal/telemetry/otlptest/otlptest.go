// Package otlptest is the tests' OTLP collector: an httptest server that
// takes OTLP/HTTP trace exports (protobuf, as coda sends them), decodes
// each ExportTraceServiceRequest (gzipped or not) and keeps its spans, so a test reads what
// a collector would have received. It is reached only by tests.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// A Receiver is a collector's OTLP/HTTP traces endpoint.
type Receiver struct {
	URL string // the base URL: what OTEL_EXPORTER_OTLP_ENDPOINT is set to

	mu       sync.Mutex
	requests int
	spans    []Span
	headers  []http.Header
	got      chan struct{} // a request arrived
	hold     chan struct{} // closed: requests are answered (Hold)
}

// A Span is one received span, its attributes as strings (a string
// slice as its items joined by ",").
type Span struct {
	Name                string
	TraceID, SpanID     string // hex
	ParentSpanID        string // hex, "" for a root
	Kind                tracepb.Span_SpanKind
	Attrs               map[string]string
	StatusError         bool
	StatusMessage       string
	Events              []string
	ServiceName         string // the resource's service.name
	InstrumentationName string
}

// New starts a receiver, closed when t ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{got: make(chan struct{}, 1<<10), hold: make(chan struct{})}
	close(r.hold)
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Hold makes the receiver a collector that never answers until the
// returned release is called (or t ends): a dead collector.
func Hold(t testing.TB) (r *Receiver, release func()) {
	r = &Receiver{got: make(chan struct{}, 1<<10), hold: make(chan struct{})}
	var once sync.Once
	release = func() { once.Do(func() { close(r.hold) }) }
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() { release(); srv.Close() })
	r.URL = srv.URL
	return r, release
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	var rd io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		if zr, err := gzip.NewReader(req.Body); err == nil {
			rd = zr
		}
	}
	body, _ := io.ReadAll(rd)
	r.mu.Lock()
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	if req.URL.Path == "/v1/traces" {
		var msg collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err == nil {
			r.spans = append(r.spans, decode(&msg)...)
		}
	}
	r.mu.Unlock()
	r.got <- struct{}{}
	<-r.hold
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Write(b)
}

// Wait waits for the next request to arrive.
func (r *Receiver) Wait() { <-r.got }

// Requests is how many requests arrived, at any path.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers are the requests' headers, in order.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Spans are the spans received so far, in order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

func decode(msg *collectortrace.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range msg.ResourceSpans {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{
					Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId), Kind: s.Kind, Attrs: attrs(s.Attributes),
					StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR, StatusMessage: s.GetStatus().GetMessage(),
					ServiceName: service, InstrumentationName: ss.GetScope().GetName(),
				}
				for _, e := range s.Events {
					sp.Events = append(sp.Events, e.Name)
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_ArrayValue:
		var items []string
		for _, e := range x.ArrayValue.Values {
			items = append(items, value(e))
		}
		return strings.Join(items, ",")
	}
	return v.String()
}
