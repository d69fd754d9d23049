package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Help (DESIGN §1): `--help` or `-h` on coda or any command prints that
// command's usage on stdout, one line per flag, and exits 0; `coda help
// CMD` prints the same. parseArgs turns the flag package's ErrHelp into a
// helpShown carrying the text, and mainCode prints it: one path for every
// command, whose usage is read off its own flag set.

// helpShown is a request for a command's usage: not a failure.
type helpShown struct{ text string }

func (h *helpShown) Error() string { return h.text }

// synopses are what each flag set's usage starts with, by its name.
var synopses = map[string]string{
	"coda": usageText + "\nServing flags (coda [flags]; `coda help CMD` for a command's):",
	"run": `coda run [flags] TASK...

One turn without an editor: the final answer goes to stdout, progress and the
run id to stderr. Exit status: 0 answered, 1 error, 2 usage, 3 finished without
an answer, 4 the model declared the answer unavailable. With --json, the answer
record is printed for every run that started, answered or not.

With --detach the run goes on in a process of its own (its own session, stdin
closed, its output in the run's record): coda prints the run id and returns at
once, exit 0. Then: coda ps lists it, coda result RUN --wait prints its answer
with the exit status above, coda cancel RUN stops it, and coda resume RUN goes on
with it from its last finished stage if its process dies.`,
	"result": `coda result [RUN-ID] [flags]

Prints a recorded run's answer: a heading naming the run and stage, then the
answer. Without RUN-ID, lists the latest runs, newest first. --artifacts DIR
copies the run's kept artifacts into DIR, at their workspace paths. --wait waits
until a run that is running ends (a detached one), then prints as above and
exits as coda run would have: 0 answered, 1 failed, cancelled or dead (its
process gone), 3 no answer, 4 unavailable.`,
	"ps": `coda ps [flags]

Lists the runs in flight and those that ended in the last day, newest first:
run id, agent, the stage it is in (or ended in), status, when it started, how
long it has run, its model and the process that runs it. A run whose process is
gone without finishing its record (killed, the machine restarted) is "dead":
coda resume goes on with it.`,
	"cancel": `coda cancel [flags] RUN-ID

Stops a detached run: its process cancels the run and finishes its record,
which says "cancelled"; cancel waits for that, then prints the run's status.`,
	"resume": `coda resume [flags] RUN-ID

Goes on with a coda run that died or was cancelled (or failed) mid-stage, from
its last finished stage: those stages are not run again, their records and
answers feed the next stage as they did, and the stage cut short starts again;
run.json lists the resume. It runs with the flags and task the run was started
with, in the directory it was started in, and exits as coda run does. Refused,
saying why: a run that answered, one still running, one from another state
directory, or one whose blueprint changed since.`,
	"validate": `coda validate [flags] NAME|PATH

Checks a blueprint (a bundled agent's name, a file, or a directory holding
blueprint.toml) and prints one line per finding; exit 1 when any is an error.
--explain also prints, for each stage that answers in JSON with a schema, what
each provider family is sent of it: as written, its strict projection (and
what that leaves out), or why it goes without strict.`,
	"agents":  "coda agents\n\nLists the bundled agents, one line each.",
	"demo":    "coda demo [flags]\n\nA scripted ACP session end to end; needs no model, key or network.",
	"version": "coda version\n\nPrints coda's version.",
}

// flagArgs name what a flag takes, for its usage line.
var flagArgs = map[string]string{
	"agent": "NAME|PATH", "model": "SPEC", "output-format": "LABEL", "output-instructions": "TEXT",
	"output-example": "TEXT|@FILE", "output-schema": "JSON|@FILE", "output-validator": "FILE",
	"config": "FILE", "state-dir": "DIR", "log-level": "LEVEL", "log-file": "FILE",
	"cwd": "DIR", "max-message-bytes": "N", "artifacts": "DIR", "worker": "NAME", "child": "NAME", "taint": "POLICY", "effort": "LEVEL",
	"commentary": "thought|message",
}

// usageOf is a flag set's usage: its synopsis, then one line per flag.
func usageOf(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(synopses[fs.Name()], "\n"))
	b.WriteString("\n")
	var lines [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if a, ok := flagArgs[f.Name]; ok {
			arg = a
		} else if arg != "" {
			arg = "VALUE"
		}
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" {
			usage += fmt.Sprintf(" (default %s)", d)
		}
		width = max(width, len(name))
		lines = append(lines, [2]string{name, usage})
	})
	if len(lines) > 0 && !strings.HasSuffix(b.String(), ":\n") {
		b.WriteString("\nFlags:\n")
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, l[0], l[1])
	}
	return b.String()
}

// helpCmd is `coda help [CMD]`: coda's usage, or a command's, as its
// --help prints it.
func helpCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0, len(args) == 1 && (args[0] == "help" || args[0] == "--help" || args[0] == "-h"):
		args = []string{"--help"}
	case len(args) == 1 && args[0] != "help" && synopses[args[0]] != "":
		args = []string{args[0], "--help"}
	case len(args) == 1 && args[0] == "serve":
		args = []string{"--help"}
	default:
		return usageError("help takes one command: run, result, validate, agents, demo or version")
	}
	err := run(ctx, args, nil, io.Discard, stderr)
	var h *helpShown
	if errors.As(err, &h) {
		_, err = io.WriteString(stdout, h.text)
	}
	return err
}
