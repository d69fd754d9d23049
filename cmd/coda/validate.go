package main

import (
	"fmt"
	"io"

	"github.com/coda-acp/coda/engine"
)

// validate is `coda validate NAME|PATH`: it loads the blueprint, compiles its
// schemas and validators, and prints what it finds. Exit 1 when any finding
// is an error.
func validate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("validate takes one agent name or blueprint path: coda validate NAME|PATH")
	}
	b, err := loadAgent(rest[0])
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
		return &exitError{code: 1}
	}
	findings := engine.Lint(b)
	errors := 0
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
		if f.Severity == engine.SeverityError {
			errors++
		}
	}
	if errors > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%s: %d error(s)", b.Source, errors)}
	}
	fmt.Fprintf(stdout, "%s: ok (%d stage(s), %d warning(s))\n", b.Source, len(b.Order), len(findings))
	return nil
}
