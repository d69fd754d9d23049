package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/coda-acp/coda/internal/telemetry/otlp"
)

// startTracing builds the OTLP exporter and the tracer: otlp.New, and a
// test's counter.
var startTracing = otlp.New

// tracing is coda's tracer when the environment's OTEL_EXPORTER_OTLP_*
// or the config's [telemetry] ask for traces (DESIGN §23), and its
// shutdown, which the caller defers; nil, and nothing built, when
// telemetry is off.
func tracing(cfg *config, log *slog.Logger) (*otlp.Tracer, func(), error) {
	c := cfg.Telemetry
	if !c.Enabled() {
		return nil, nil, nil
	}
	c.Version, c.Log = version, log
	tr, err := startTracing(context.Background(), c)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	log.Debug("exporting traces over OTLP/HTTP", "include_content", c.IncludeContent)
	// The last spans go out before coda exits, within a bound: a
	// collector that is gone does not hold the exit.
	return tr, func() {
		if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
			log.Warn("telemetry: the last spans did not go out", "err", err)
		}
	}, nil
}
