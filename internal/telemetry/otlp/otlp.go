// Package otlp is coda's telemetry when it is on (DESIGN §23): a
// telemetry.Tracer over the OpenTelemetry Go SDK that exports its spans
// over OTLP/HTTP with coda's own exporter (exporter.go), named and
// attributed as the OpenTelemetry GenAI semantic conventions have them
// (spans.go). Only cmd/coda imports it; the engine sees telemetry.Tracer
// alone.
//
// Where the spans go is the standard OTEL_EXPORTER_OTLP_* environment, as
// exporter.go reads it (endpoint, headers, compression, timeout,
// certificates), or else the config's [telemetry] table (Config). OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
// turns it off whatever the rest says.
//
// A collector that is slow or gone never holds a turn or coda's exit: spans
// are exported in batches from a bounded queue, dropped when it is full;
// a turn's end asks for a flush without waiting for it; Shutdown waits at
// most ShutdownTimeout.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/coda-acp/coda/internal/telemetry"
)

// Config is the config's [telemetry] table, and what coda adds to it.
type Config struct {
	// Endpoint is the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
	// is one: spans go to its /v1/traces. The environment's endpoint wins.
	Endpoint string `toml:"endpoint"`
	// Headers go with every export (a collector's key); the environment's
	// OTEL_EXPORTER_OTLP_HEADERS, when set, wins.
	Headers map[string]string `toml:"headers"`
	// IncludeContent exports the prompt, the answer, the replies and the
	// tools' arguments and results on the spans (masked as the run's record
	// is): off by default, as the GenAI conventions ask.
	IncludeContent bool `toml:"include_content"`

	// Version is coda's, the resource's service.version.
	Version string `toml:"-"`
	// Log is where the SDK's own errors go (an export that failed); nil
	// discards them.
	Log *slog.Logger `toml:"-"`
}

// MaxAttributeLength is the most characters of a string attribute a span
// keeps (the SDK counts characters, not bytes), so that the spans queued
// for export stay bounded with include_content: 2048 of them at most.
const MaxAttributeLength = 16 << 10

// ShutdownTimeout bounds how long Shutdown waits for the last spans to
// go out; FlushTimeout, a turn's flush in the background.
const (
	ShutdownTimeout = 2 * time.Second
	FlushTimeout    = 10 * time.Second
)

// Enabled reports whether c and the environment ask for traces: an
// endpoint in either, and the SDK not disabled.
func (c Config) Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return c.Endpoint != "" || envEndpoint()
}

func envEndpoint() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Check says what is wrong with the table, for start-up's one line.
func (c Config) Check() error {
	if c.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("[telemetry] endpoint %q: give the collector's http:// or https:// URL (its OTLP/HTTP port, 4318 by default)", c.Endpoint)
	}
	return nil
}

// A Tracer exports its spans over OTLP/HTTP.
type Tracer struct {
	tp      *sdktrace.TracerProvider
	tr      trace.Tracer
	content bool

	mu       sync.Mutex
	flushing bool // a flush runs in the background
	again    bool // and another is owed when it ends
}

// New builds the exporter and the tracer. It dials nothing: the first
// batch does.
func New(ctx context.Context, c Config) (*Tracer, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	warnProtocol(log)
	// The SDK's own errors and logs (an export that failed) go to coda's
	// log, not to the standard logger; the first failure is a warning,
	// the rest repeat it at debug level.
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
	otel.SetErrorHandler(&errorLog{log: log})

	exp, err := newExporter(c)
	if err != nil {
		return nil, err
	}
	// service.name is coda unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise (later detectors win).
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "coda"), attribute.String("service.version", c.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	// The batcher's queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048 by
	// default) and never blocks a span's end: a full queue drops. So is
	// what a span holds: a content attribute (a tool's result) is cut at
	// MaxAttributeLength characters unless OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT says.
	limits := sdktrace.NewSpanLimits()
	if limits.AttributeValueLengthLimit < 0 {
		limits.AttributeValueLengthLimit = MaxAttributeLength
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits))
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/coda-acp/coda", trace.WithInstrumentationVersion(c.Version)), content: c.IncludeContent}, nil
}

// warnProtocol says once that an OTLP protocol the HTTP exporter does not
// speak is exported over http/protobuf.
func warnProtocol(log *slog.Logger) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(os.Getenv(k)); p != "" {
			if p != "http/protobuf" && p != "http/json" {
				log.Warn("coda exports traces over OTLP/HTTP only: "+k+" is not http/protobuf or http/json; sending http/protobuf", "protocol", p)
			}
			return
		}
	}
}

// Flush exports the spans that have ended, in the background, within
// FlushTimeout: a turn's end never waits for the collector. Flushes asked
// for while one runs are one more after it.
func (t *Tracer) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flushing {
		t.again = true
		return
	}
	t.flushing = true
	go func() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
			_ = t.tp.ForceFlush(ctx) // its failure is the error handler's
			cancel()
			t.mu.Lock()
			if !t.again {
				t.flushing = false
				t.mu.Unlock()
				return
			}
			t.again = false
			t.mu.Unlock()
		}
	}()
}

// Shutdown exports what is left and stops the exporter, waiting at most
// timeout (ShutdownTimeout where coda exits).
func (t *Tracer) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return t.tp.Shutdown(ctx)
}

// errorLog is the SDK's error handler: coda's log.
type errorLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	said bool
}

func (h *errorLog) Handle(err error) {
	h.mu.Lock()
	first := !h.said
	h.said = true
	h.mu.Unlock()
	if first && !errors.Is(err, context.Canceled) {
		h.log.Warn("telemetry: exporting traces failed (later failures are logged at debug level)", "err", err)
		return
	}
	h.log.Debug("telemetry: exporting traces failed", "err", err)
}

var _ telemetry.Tracer = (*Tracer)(nil)
