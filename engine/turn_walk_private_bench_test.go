package engine_test

import (
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
)

// setPrivate gives a benchmark's turn its session's Index (nil: none), in
// a file of its own so that BenchmarkTurn_grep20k builds against a
// revision without Turn.Private once this file is left out.
func setPrivate(t *engine.Turn, ix *taint.Index) { t.Private = ix }
