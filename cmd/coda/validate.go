package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/lint"
	"github.com/coda-acp/coda/engine/tools"
)

// validate is `coda validate NAME|PATH`: it reads the blueprint, compiles
// its schemas and validators, and prints one line per finding, each naming
// the blueprint, the severity and a stable code:
//
//	examples/reviewer.toml: error[unreachable-stage] stages.notes: ...
//
// A blueprint that does not load is reported the same way. Exit 1 when any
// finding is an error.
func validate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate")
	configPath := fs.String("config", "", "the config file, for what it says of models (tools = false)")
	explain := fs.Bool("explain", false, "print what each provider family is sent of the answer's schema: as written, its strict projection, or why neither")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*configPath, os.Getenv)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("validate takes one agent name or blueprint path: coda validate NAME|PATH")
	}
	data, source, dir, err := readBlueprint(rest[0])
	if err != nil {
		fmt.Fprintf(stdout, "%s: %s\n", rest[0], blueprint.Finding{Severity: blueprint.SeverityError, Code: blueprint.CodeLoad, Message: err.Error()})
		return &exitError{code: 1, msg: fmt.Sprintf("%s: the blueprint could not be read", rest[0])}
	}
	b, findings := lint.Source(data, source, dir, lint.Options{
		Tools:   slices.Collect(maps.Keys(tools.Builtin())),
		NoTools: func(spec string) string { return cfg.catalog.Facts(spec).NoTools },
		Efforts: cfg.catalog.Takes,
		Agents:  loadSpawned,
		Served:  cfg.catalog.Served,
	})
	errs, warnings := 0, 0
	for _, f := range findings {
		fmt.Fprintf(stdout, "%s: %s\n", source, f)
		switch f.Severity {
		case blueprint.SeverityError:
			errs++
		case blueprint.SeverityWarning:
			warnings++
		}
	}
	if *explain && errs == 0 {
		explainSchemas(stdout, source, b)
	}
	if errs > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%s: %s, %s", source, plural(errs, "error"), plural(warnings, "warning"))}
	}
	fmt.Fprintf(stdout, "%s: ok: %s, %s\n", source, plural(len(b.Order), "stage"), plural(warnings, "warning"))
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
