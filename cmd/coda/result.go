package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// result is `coda result RUN-ID [--raw|--json]`.
func result(args []string, stdout, stderr io.Writer) error {
	var raw, asJSON bool
	var stateDir string
	fs := newFlagSet("result")
	fs.BoolVar(&raw, "raw", false, "print the answer's bytes alone")
	fs.BoolVar(&asJSON, "json", false, "print the answer record as JSON")
	fs.StringVar(&stateDir, "state-dir", "", "where run records are (default $XDG_STATE_HOME/coda)")
	var worker, child string
	fs.StringVar(&worker, "worker", "", "print the answer of one of the run's fan_out workers (w1, w2, …)")
	fs.StringVar(&child, "child", "", "print the answer of one of the agents the run spawned (c1, …); with --worker, of that agent's worker")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("result takes one RUN-ID: coda result RUN-ID [--raw|--json]")
	}
	if raw && asJSON {
		return usageError("--raw and --json: choose one")
	}
	if err := engine.CheckRunID(rest[0]); err != nil {
		return usageError("%v", err)
	}
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	rr, err := readResult(stateDir, rest[0], child, worker)
	if err != nil {
		return err
	}
	if rr.FinalOutput == nil {
		return &exitError{code: 3, msg: fmt.Sprintf("run %s has no answer (status: %s)", rr.RunID, rr.Status)}
	}
	return printAnswer(stdout, rr.FinalOutput, raw, asJSON, true)
}

// readResult reads the record of a run, or of one of its children or
// workers (DESIGN §12).
func readResult(stateDir, runID, child, worker string) (*engine.RunRecord, error) {
	for _, name := range []string{child, worker} {
		if name != "" && engine.CheckRunID(name) != nil {
			return nil, usageError("%q is not a worker or child name, such as w1 or c1", name)
		}
	}
	var path []string
	if child != "" {
		path = append(path, "children", child)
	}
	if worker != "" {
		path = append(path, "workers", worker)
	}
	if len(path) == 0 {
		return engine.ReadRun(stateDir, runID)
	}
	return engine.ReadSubRun(stateDir, runID, strings.Join(path, "/"))
}
