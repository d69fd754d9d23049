// Command coda is an Agent Client Protocol agent whose every turn ends in one
// validated final answer. Editors launch it as a subprocess and speak
// JSON-RPC to it over stdio; scripts use `coda run`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0"

func main() {
	out := os.Stdout
	os.Stdout = os.Stderr // a stray print must never corrupt the ACP stream
	ctx, stop := notifySignals(context.Background())
	code := mainCode(ctx, os.Args[1:], os.Stdin, out, os.Stderr)
	stop()
	if sig, ok := context.Cause(ctx).(caughtSignal); ok {
		code = sig.exitCode()
	}
	os.Exit(code)
}

// notifySignals returns a context that SIGINT or SIGTERM cancels, with the
// signal as its cause. The commands then wind down (a served connection
// answers every prompt in flight "cancelled" and flushes) and coda exits
// 128+N, as a shell reports a process a signal ended: 130 for SIGINT, 143
// for SIGTERM. A second signal is not caught: it ends coda at once.
//
// SIGPIPE and SIGHUP never end coda (DESIGN §21): a client that is gone
// (its end of stdout closed, its terminal hung up) stops what is written
// to it, not the work. Caught rather than ignored, so that a write to a
// closed stdout or stderr fails with EPIPE instead of killing coda (Go's
// runtime kills a process that writes to a broken fd 1 or 2 unless
// SIGPIPE is caught), and so that the commands coda runs start with both
// signals at their defaults.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	outlived := make(chan os.Signal, 1)
	signal.Notify(outlived, syscall.SIGPIPE, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-caught:
				signal.Stop(caught)
				cancel(caughtSignal{sig})
			case <-outlived:
				continue // noted, and nothing else
			case <-done:
			}
			return
		}
	}()
	return ctx, func() {
		signal.Stop(caught)
		signal.Stop(outlived)
		close(done)
		cancel(nil)
	}
}

// caughtSignal is the cause of a context a signal cancelled.
type caughtSignal struct{ os.Signal }

func (c caughtSignal) Error() string { return "caught " + c.Signal.String() }

func (c caughtSignal) exitCode() int {
	if n, ok := c.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// mainCode runs coda and turns its error into an exit status, printing the
// error as one line on stderr.
func mainCode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdin, stdout, stderr)
	if err == nil {
		return 0
	}
	var help *helpShown
	if errors.As(err, &help) {
		io.WriteString(stdout, help.text)
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "coda: "+ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "coda: "+err.Error())
	return 1
}

// exitError carries an exit status: 1 error, 2 usage, 3 no answer, 4 the
// model declared the answer unavailable.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

// run is main without globals, so tests can drive a whole agent over pipes.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd, rest := "", args
	if len(args) > 0 {
		switch args[0] {
		case "run", "result", "ps", "cancel", "resume", "validate", "agents", "demo", "version", "serve", "help":
			cmd, rest = args[0], args[1:]
		}
	}
	switch cmd {
	case "", "serve":
		return serve(ctx, rest, stdin, stdout, stderr)
	case "run":
		return runOnce(ctx, rest, stdin, stdout, stderr)
	case "result":
		return result(ctx, rest, stdout, stderr)
	case "ps":
		return ps(rest, stdout)
	case "cancel":
		return cancel(ctx, rest, stdout)
	case "resume":
		return resume(ctx, rest, stdout, stderr)
	case "validate":
		return validate(rest, stdout, stderr)
	case "agents":
		return agentsCmd(rest, stdout)
	case "demo":
		return demo(ctx, rest, stdout, stderr)
	case "version":
		if _, err := parseArgs(newFlagSet("version"), rest); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "coda "+version)
		return nil
	case "help":
		return helpCmd(ctx, rest, stdout, stderr)
	}
	return nil
}

const usageText = `coda — an ACP agent whose every turn ends in one validated final answer

  coda [flags]                      serve ACP on stdin/stdout (what an editor launches)
  coda run [flags] TASK...          one turn without an editor; prints the final answer
  coda run --detach [flags] TASK... start the run in a process of its own; print its id, return at once
  coda result [RUN-ID] [flags]      print a recorded run's answer; without RUN-ID, list the latest runs
                                    (--wait: wait for a running one, exit as coda run would)
  coda ps [--json]                  the runs in flight and lately ended: stage, status, process
  coda cancel RUN-ID                stop a detached run; its record says cancelled
  coda resume RUN-ID [--detach]     go on with a run that died or was cancelled, from its last finished stage
  coda validate NAME|PATH           check a blueprint
  coda agents                       list the bundled agents
  coda demo                         a scripted ACP session end to end (no model, key or network)
  coda version
  coda help [CMD]                   this text, or a command's flags (also CMD --help)

Models: --model PROVIDER:MODEL (or default_model in the config file); keys
are read from the environment, never from a file:
  anthropic:MODEL   ANTHROPIC_API_KEY     e.g. anthropic:claude-sonnet-5-5
  openai:MODEL      OPENAI_API_KEY        e.g. openai:gpt-5.5 (the Responses API)
  gemini:MODEL      GEMINI_API_KEY (or GOOGLE_API_KEY)  e.g. gemini:gemini-4-hydrogen
  openrouter:MODEL  OPENROUTER_API_KEY    e.g. openrouter:anthropic/claude-sonnet-5.5
  ollama:MODEL      a local Ollama (OLLAMA_HOST)  e.g. ollama:qwen3 (its own API,
                    asking for the model's whole context; [providers.ollama]
                    num_ctx = N caps it)
  NAME:MODEL        a [providers.NAME] of the config file: kind = "openai" for
                    what speaks chat completions (vLLM, llama.cpp, LM Studio,
                    Ollama's /v1: base_url = ".../v1"; server = "vllm" or
                    "llama.cpp" asks a JSON reply in that server's own field),
                    api = "responses" for OpenAI's Responses API; kind =
                    "ollama" for Ollama's own API, num_ctx = N to cap its
                    context; effort = LEVEL
--effort LEVEL sets the reasoning effort: off, low, medium, high, or a
model's own minimal, xhigh, max; a level the model cannot take is refused
with the levels it takes. A stage's model = { effort = LEVEL } asks its own;
--effort wins where the stage takes --model. In the editor, the Effort
picker (config option "effort", category thought_level; acpx set effort
high) offers the levels the session's model takes.

The Model picker lists, beside [picker] models, what each provider with a
key (or named in the config) lists, fetched in the background when a
session starts (5 s, 200 models, once per process); [picker] discover =
false turns that off.

Runs fit the model's window: a request past 85% of it has its oldest tool
results, then the session's oldest turns, cut to one-line notes naming
where the run's record keeps them (run:PATH); the system prompt, the tools
and the task are never cut, and a request that cannot fit is not sent.
`
