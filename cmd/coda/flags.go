package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// launchFlags are the flags shared by serving and `coda run`.
type launchFlags struct {
	agent        string
	model        string
	format       string
	instructions string
	example      string
	schema       string
	validator    string
	assertFormat optionalBool // --output-assert-format: unset, true or false
	config       string
	stateDir     string
	logLevel     string
	logFile      string
	trace        bool
	taint        string
	effort       string
	// noProject keeps the working directory's AGENTS.md out of the
	// stages' prompts.
	noProject bool
}

func (f *launchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.agent, "agent", "default", "a bundled agent name, or a blueprint file or directory")
	fs.StringVar(&f.model, "model", "", "the model: anthropic:MODEL, openai:MODEL, gemini:MODEL, ollama:MODEL, openrouter:MODEL, NAME:MODEL, script:PATH")
	fs.StringVar(&f.format, "output-format", "", "the answer's format label: json, xml, csv, yaml, toml, markdown, text, a MIME type, or any label")
	fs.StringVar(&f.instructions, "output-instructions", "", "what the answer must contain and how it is laid out")
	fs.StringVar(&f.example, "output-example", "", "an example answer (TEXT or @FILE)")
	fs.StringVar(&f.schema, "output-schema", "", "a JSON Schema the answer's data must satisfy (JSON or @FILE)")
	fs.StringVar(&f.validator, "output-validator", "", "a Starlark validator script (.star)")
	fs.Var(&f.assertFormat, "output-assert-format", "with =false, the schema's \"format\" is an annotation; by default date-time, date, time, duration, email, hostname, ipv4, ipv6, uuid and uri are checked")
	fs.StringVar(&f.config, "config", "", "the config file (default $XDG_CONFIG_HOME/coda/config.toml when it exists)")
	fs.StringVar(&f.stateDir, "state-dir", "", "where run records go (default $XDG_STATE_HOME/coda)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFile, "log-file", "", "write logs to this file instead of stderr")
	fs.BoolVar(&f.trace, "trace", false, "log every wire message")
	fs.StringVar(&f.effort, "effort", "", "the reasoning effort: off, low, medium, high, or a model's own minimal, xhigh, max (wins over the config's effort)")
	fs.BoolVar(&f.noProject, "no-project-instructions", false, "do not give the stages the working directory's AGENTS.md as the project's instructions")
	fs.StringVar(&f.taint, "taint", "", "the taint gate's policy: off, allow, deny or ask (wins over the blueprint's and the config file's)")
}

// optionalBool is a boolean flag that remembers whether it was given:
// --output-assert-format, --output-assert-format=true or =false.
type optionalBool struct{ v *bool }

func (b *optionalBool) IsBoolFlag() bool { return true }

func (b *optionalBool) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	return strconv.FormatBool(*b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.v = &v
	return nil
}

// newFlagSet makes a flag set that reports errors through parse.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// helpFor is the command that lists the flags of the flag set named name:
// the command's own help, or coda's when serving.
func helpFor(name string) string {
	if name == "coda" {
		return "coda help"
	}
	return "coda help " + name
}

// parseArgs parses flags wherever they stand among the positional
// arguments (`coda result RUN-ID --raw` works) and returns the positional
// ones. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpShown{usageOf(fs)} // help.go
			}
			return nil, usageError("%s (see `%s`)", asTyped(err, args), helpFor(fs.Name()))
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// asTyped is a flag error as the user typed the flag: the flag package
// names it "-bogus" whatever was typed. An unknown flag is echoed whole,
// as args hold it ("--json=maybe"); a known one, in a missing or bad
// value's message, by the name typed ("--json").
func asTyped(err error, args []string) string {
	msg := err.Error()
	// The flag package's messages, each with the name where it stands.
	for _, form := range []struct{ before, after string }{
		{"flag provided but not defined: -", ""},
		{"flag needs an argument: -", ""},
		{"invalid boolean value ", " for -"},
		{"invalid value ", " for flag -"},
	} {
		if !strings.HasPrefix(msg, form.before) {
			continue
		}
		at := len(form.before)
		if form.after != "" {
			i := strings.Index(msg, form.after)
			if i < 0 {
				continue
			}
			at = i + len(form.after)
		}
		name, rest, _ := strings.Cut(msg[at:], ":")
		whole := form.after == "" && strings.HasPrefix(form.before, "flag provided")
		if typed := typedFlag(name, args, whole); typed != "" {
			if rest != "" || strings.Contains(msg[at:], ":") {
				rest = ":" + rest
			}
			return msg[:at-1] + typed + rest
		}
	}
	return msg
}

// typedFlag is the argument that gave flag name, as typed: its name with
// its dashes ("--json"), or with whole the argument itself
// ("--json=maybe"); "" when none did.
func typedFlag(name string, args []string, whole bool) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		typed, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(typed, "-") && strings.TrimLeft(typed, "-") == name {
			if whole {
				return a
			}
			return typed
		}
	}
	return ""
}

// stateDir is where run records go.
func (f *launchFlags) stateDirectory() string {
	if f.stateDir != "" {
		return f.stateDir
	}
	return defaultStateDir()
}

func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "coda")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "coda")
	}
	return filepath.Join(os.TempDir(), "coda-state")
}

// logger builds the logger: stderr (or --log-file), never stdout.
func (f *launchFlags) logger(stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	switch strings.ToLower(f.logLevel) {
	case "debug":
		level = slog.LevelDebug
	case "info", "":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, nil, usageError("--log-level: %q is not one of debug, info, warn, error", f.logLevel)
	}
	if f.trace {
		level = slog.LevelDebug
	}
	w, closeFn := stderr, func() {}
	if f.logFile != "" {
		file, err := os.OpenFile(f.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closeFn = file, func() { file.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), closeFn, nil
}
