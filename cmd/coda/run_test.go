package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// A log record written while a model message streams starts on a line of
// its own; a run's warning is left out of the log (coda run prints it at
// the end), other records are not.
func TestTerminalSink_log(t *testing.T) {
	var out bytes.Buffer
	sink := &terminalSink{w: &out}
	log := slog.New(withoutWarnings{slog.NewTextHandler(sink.logWriter(), &slog.HandlerOptions{Level: slog.LevelDebug})}).With("run", "r-1")
	sink.Emit(context.Background(), engine.Event{Kind: engine.EventText, MessageID: "m-1", Text: "Thinking"})
	log.Info("taint gate", "decision", "deny")
	log.Warn("stage answer ended without the answer it owes", engine.LogWarning, true)
	sink.Emit(context.Background(), engine.Event{Kind: engine.EventText, MessageID: "m-2", Text: "Done."})
	sink.endLine()
	got := out.String()
	if !strings.HasPrefix(got, "Thinking\ntime=") || !strings.Contains(got, `msg="taint gate" run=r-1 decision=deny`) {
		t.Errorf("the log record does not start on a line of its own:\n%s", got)
	}
	if strings.Contains(got, "owes") {
		t.Errorf("a run's warning was logged:\n%s", got)
	}
	if !strings.HasSuffix(got, "\nDone.\n") {
		t.Errorf("the next message does not start on its own line:\n%s", got)
	}
}
