package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// exporter is the SDK's span exporter over OTLP/HTTP with protobuf
// bodies (or OTLP/JSON ones, json.go). It is coda's own rather than the SDK's otlptracehttp because
// that one imports the OTLP collector package, which links gRPC and
// grpc-gateway: half again coda's binary and their package init at every
// start, telemetry on or off. This one links only the OTLP message
// packages (trace, common, resource), none of which imports gRPC
// (TestLinks_noGRPC).
//
// A failed export is not retried: the batch is dropped and the error goes
// to the SDK's error handler (coda's log). Traces are best effort, and a
// retry would hold the batcher's queue while a turn's spans pile up
// behind it.
type exporter struct {
	url       string
	headers   map[string]string
	gzip      bool
	json      bool // http/json: OTLP/JSON bodies
	timeout   time.Duration
	client    *http.Client
	userAgent string
	stopped   atomic.Bool
}

// DefaultTimeout bounds one export unless OTEL_EXPORTER_OTLP_TIMEOUT (or
// its TRACES_ form, in milliseconds) says otherwise.
const DefaultTimeout = 10 * time.Second

// maxResponse is the most of a collector's answer read.
const maxResponse = 64 << 10

// newExporter reads the OTEL_EXPORTER_OTLP_* environment over c: the
// traces-specific variable first, then the general one, then the config.
func newExporter(c Config) (*exporter, error) {
	e := &exporter{headers: map[string]string{}, timeout: DefaultTimeout, userAgent: "coda/" + c.Version}
	switch {
	case env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		e.url = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") // as given, path and all
	case env("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		e.url = tracesURL(env("OTEL_EXPORTER_OTLP_ENDPOINT"))
	case c.Endpoint != "":
		e.url = tracesURL(c.Endpoint)
	default:
		e.url = "http://localhost:4318/v1/traces"
	}
	if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: traces endpoint %q: give the collector's http:// or https:// URL", e.url)
	}

	if h, k := envFirst("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"); k != "" {
		e.headers = parseHeaders(h)
	} else {
		for k, v := range c.Headers {
			e.headers[k] = v
		}
	}
	if v, k := envFirst("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); k != "" {
		switch strings.ToLower(v) {
		case "gzip":
			e.gzip = true
		case "none", "":
		default:
			return nil, fmt.Errorf("telemetry: %s=%q: gzip or none", k, v)
		}
	}
	if v, k := envFirst("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); k != "" {
		e.json = v == "http/json" // anything else: http/protobuf, as warnProtocol says
	}
	if v, k := envFirst("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); k != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("telemetry: %s=%q: a positive number of milliseconds", k, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tlsConf, err := tlsConfig()
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf
	}
	e.client = &http.Client{Transport: tr}
	return e, nil
}

func env(k string) string { return strings.TrimSpace(os.Getenv(k)) }

// envFirst is the first of keys set, and its name ("" when none is).
func envFirst(keys ...string) (value, key string) {
	for _, k := range keys {
		if v := env(k); v != "" {
			return v, k
		}
	}
	return "", ""
}

// tracesURL is a base endpoint's /v1/traces.
func tracesURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base // newExporter says what is wrong
	}
	u.Path = path.Join("/", u.Path, "v1/traces")
	return u.String()
}

// parseHeaders reads key=value pairs separated by commas, percent-encoded
// as the OTLP exporter specification has them; a malformed pair is
// skipped.
func parseHeaders(s string) map[string]string {
	h := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		k, err1 := url.PathUnescape(strings.TrimSpace(k))
		v, err2 := url.PathUnescape(strings.TrimSpace(v))
		if err1 != nil || err2 != nil || k == "" {
			continue
		}
		h[k] = v
	}
	return h
}

// tlsConfig is the certificates the environment names: a CA to trust, a
// client certificate and key; nil when it names none.
func tlsConfig() (*tls.Config, error) {
	ca, _ := envFirst("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE")
	cert, _ := envFirst("OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	key, _ := envFirst("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP certificate: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("telemetry: OTLP certificate %s: no PEM certificate in it", ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// ExportSpans sends spans in one request, within the exporter's timeout.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() || len(spans) == 0 {
		return nil
	}
	var body []byte
	var err error
	contentType := "application/x-protobuf"
	if e.json {
		body, err = jsonRequest(resourceSpans(spans))
		contentType = "application/json"
	} else {
		body, err = exportRequest(spans)
	}
	if err != nil {
		return fmt.Errorf("telemetry: encoding spans: %w", err)
	}
	if e.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body) // a bytes.Buffer does not fail
		zw.Close()
		body = b.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", e.userAgent)
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("telemetry: exporting %d spans: %w", len(spans), err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("telemetry: exporting %d spans: the collector answered %s", len(spans), resp.Status)
	}
	if err != nil || e.json {
		return nil // the spans were taken; a JSON answer's partial success is not read
	}
	return partialSuccess(answer)
}

// exportRequest is an ExportTraceServiceRequest: its one field, 1, the
// repeated ResourceSpans. Written by hand because the message's Go type
// lives in the collector package, the one that links gRPC.
func exportRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	var b []byte
	for _, rs := range resourceSpans(spans) {
		m, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	return b, nil
}

// partialSuccess reads an ExportTraceServiceResponse's partial_success
// (field 1: rejected_spans 1, error_message 2) and makes an error of spans
// the collector rejected. An answer it cannot read is taken as success:
// the status said so.
func partialSuccess(b []byte) error {
	ps, ok := field(b, 1, protowire.BytesType)
	if !ok {
		return nil
	}
	var rejected uint64
	if v, ok := field(ps, 1, protowire.VarintType); ok {
		rejected, _ = protowire.ConsumeVarint(v)
	}
	msg, _ := field(ps, 2, protowire.BytesType)
	if rejected == 0 && len(msg) == 0 {
		return nil
	}
	return fmt.Errorf("telemetry: the collector rejected %d spans: %s", rejected, msg)
}

// field is the last occurrence of field num of type typ in the message b:
// the bytes of a BytesType field's content, the encoded varint of a
// VarintType one.
func field(b []byte, num protowire.Number, typ protowire.Type) (val []byte, ok bool) {
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return val, ok
		}
		b = b[l:]
		vl := protowire.ConsumeFieldValue(n, t, b)
		if vl < 0 {
			return val, ok
		}
		if n == num && t == typ {
			if t == protowire.BytesType {
				val, _ = protowire.ConsumeBytes(b[:vl])
			} else {
				val = b[:vl]
			}
			ok = true
		}
		b = b[vl:]
	}
	return val, ok
}

// Shutdown stops the exporter: later exports are dropped. An export under
// way ends within its own timeout.
func (e *exporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return nil
}

var _ sdktrace.SpanExporter = (*exporter)(nil)
