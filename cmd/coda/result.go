package main

import (
	"fmt"
	"io"

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
	rr, err := engine.ReadRun(stateDir, rest[0])
	if err != nil {
		return err
	}
	if rr.FinalOutput == nil {
		return &exitError{code: 3, msg: fmt.Sprintf("run %s has no answer (status: %s)", rr.RunID, rr.Status)}
	}
	return printAnswer(stdout, rr.FinalOutput, raw, asJSON, true)
}
