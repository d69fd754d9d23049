package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/internal/catalog"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// launch is everything a served or one-shot run needs, checked before any
// token is spent. Its settings are the server's own Options, filled in
// place by prepare, so that a new one is a field of acp.Options set in one
// place: serving hands them over whole, and `coda run` reads the ones a
// turn needs (the agent, the launch spec and its directory, the models,
// the effort, the engine).
type launch struct {
	acp.Options
	spawned  []spawnedAgent // the agents its runs can start (spawn lists)
	log      *slog.Logger
	closeLog func()
}

// prepare checks the flags, blueprint, output spec, config and models. Any
// problem is one line, before stdin is read; except that when serving, a
// missing model or key is not: coda serves, and says what to set.
func (f *launchFlags) prepare(stderr io.Writer, serving bool) (*launch, error) {
	log, closeLog, err := f.logger(stderr)
	if err != nil {
		return nil, err
	}
	l := &launch{log: log, closeLog: closeLog}
	l.UserModel, l.UserEffort = f.model, f.effort
	fail := func(err error) (*launch, error) { closeLog(); return nil, err }
	if err := taint.CheckPolicy(f.taint); err != nil {
		return fail(usageError("--taint: %v", err))
	}
	if l.LaunchDir, err = os.Getwd(); err != nil {
		return fail(err)
	}
	if l.Agent, err = loadAgent(f.agent); err != nil {
		return fail(err)
	}
	if l.Launch, err = outputspec.Launch(f.format, f.instructions, f.example, f.schema, f.validator, f.assertFormat.v); err != nil {
		return fail(err)
	}
	// The launch's own schema and validator: a start-up error, not a
	// schema failed open as a blueprint's is (DESIGN §19).
	var ce *outputspec.CallerError
	if err := outputspec.CheckCaller(outputspec.Level{Dir: l.LaunchDir, Spec: l.Launch}); errors.As(err, &ce) {
		if ce.Field == "validator" {
			return fail(ce.Err) // "validator FILE:LINE:COL: ..."
		}
		return fail(fmt.Errorf("--output-schema: %v", ce.Err))
	}
	if err := f.checkAnswers(l.Agent); err != nil {
		return fail(err)
	}
	if l.spawned, err = spawnedAgents(l.Agent); err != nil {
		return fail(err)
	}
	cfg, err := loadConfig(f.config, os.Getenv)
	if err != nil {
		return fail(err)
	}
	cat := cfg.catalog
	cat.SetLog(log)
	if err := cat.SetEffort(f.effort); err != nil {
		return fail(usageError("--effort: %v", err))
	}
	if cfg.MaxModelCalls < 0 {
		return fail(fmt.Errorf("config: max_model_calls must be positive, not %d", cfg.MaxModelCalls))
	}
	if cfg.MCP.MaxTools < 0 {
		return fail(fmt.Errorf("config: [mcp] max_tools must be positive, not %d", cfg.MCP.MaxTools))
	}
	if err := acp.CheckCommentary(cfg.Commentary); err != nil {
		return fail(fmt.Errorf("config: %v", err))
	}
	l.Commentary = cfg.Commentary
	l.Agent.OverwriteArtifacts = cfg.MIME.OverwriteArtifacts
	l.Engine = &engine.Engine{
		Models: cfg.models(), Tools: tools.Builtin(), Agents: cfg.loadSpawned, Store: store.New(f.stateDirectory()),
		MaxModelCalls: cfg.MaxModelCalls, MaxTools: cfg.MCP.MaxTools, Log: log, ModelFacts: cat.Facts,
		MaxArtifactCopy:       cfg.MIME.MaxPartBytes,
		Taint:                 taint.Launch{Config: cfg.Taint, Policy: f.taint},
		NoProjectInstructions: f.noProject,
	}
	// What a coda that was killed left in the state directory's tmp/: a
	// read of that one folder, nothing when none was.
	if err := l.Engine.Store.Clean(); err != nil {
		log.Warn("cleaning the state directory's temporary files", "err", err)
	}
	if l.UserModel == "" && cat.Default(false) == "" {
		cat.SetDefault(catalog.EnvDefault(os.Getenv))
	}
	l.Models = &servedModels{cat: cat, l: l, launch: cmp.Or(l.UserModel, cat.Default(false))}
	err = l.preflight(cat, l.UserModel, cat.Default(false))
	switch {
	case err == nil:
	case errors.Is(err, errNoModel) && serving:
		cat.Search()
		log.Info("no model is configured: looking for a local Ollama; until one answers, prompts ask for a key", "hint", err)
	case errors.Is(err, errNoModel):
		if cat.SetDefault(cat.FindOllama(context.Background())); cat.Default(false) == "" {
			return fail(err)
		}
		if err := l.preflight(cat, l.UserModel, cat.Default(false)); err != nil {
			return fail(err)
		}
	case serving && servable(err):
		log.Warn("serving without a usable model: prompts are answered \"authentication required\" until it is set", "problem", err)
	default:
		return fail(err)
	}
	tracer, shutdown, err := tracing(cfg, log)
	if err != nil {
		return fail(err)
	}
	if tracer != nil {
		l.Engine.Tracer = tracer
		l.closeLog = func() { shutdown(); closeLog() }
	}
	return l, nil
}

// preflight checks, before any token is spent, that every stage has a
// model it can use with this user model and default: one of its candidates
// whose provider is known and has its key.
func (l *launch) preflight(cat *catalog.Catalog, userModel, defaultModel string) error {
	if err := stagesUsable(cat, l.Agent, userModel, defaultModel); err != nil {
		return err
	}
	// A child runs with the same --model and default (engine/subrun.go).
	for _, sp := range l.spawned {
		if err := stagesUsable(cat, sp.agent, userModel, defaultModel); err != nil {
			return fmt.Errorf("agent %s (spawned by stage %s): %w", cmp.Or(sp.agent.Agent.Name, sp.agent.Source), sp.by, err)
		}
	}
	return nil
}

// stagesUsable is preflight for one agent's stages.
func stagesUsable(cat *catalog.Catalog, b *blueprint.Blueprint, userModel, defaultModel string) error {
	for _, name := range b.Order {
		candidates := b.Stages[name].ModelCandidates(userModel, defaultModel)
		if len(candidates) == 0 {
			return noModelError{stage: name, stages: len(b.Order)}
		}
		if err := anyUsable(cat, candidates); err != nil {
			return err
		}
		if err := stageEffortTaken(cat, b.Stages[name], candidates); err != nil {
			return err
		}
	}
	return nil
}

// stageEffortTaken refuses a stage's own model.effort that the model it
// would first call cannot take, as --effort is refused (catalog.Check); a
// stage that takes the user's effort is checked by that.
func stageEffortTaken(cat *catalog.Catalog, s *blueprint.Stage, candidates []string) error {
	e := s.Model.Effort
	if e == "" || (cat.Effort() != "" && s.UserDefaultAllowed()) {
		return nil
	}
	// The first usable candidate; a later fallback is sent the nearest
	// level it takes.
	i := slices.IndexFunc(candidates, func(spec string) bool { return cat.Check(spec) == nil })
	if i < 0 {
		return nil
	}
	spec := candidates[i]
	takes := cat.Takes(spec)
	if slices.Contains(takes, e) {
		return nil
	}
	return catalog.NotTaken(fmt.Sprintf("stage %s's model.effort %s", s.Name, e), spec, takes)
}

// A spawnedAgent is an agent a run can start with spawn_agent; by names
// the stage whose spawn list names it.
type spawnedAgent struct {
	agent *blueprint.Blueprint
	by    string
}

// spawnedAgents loads every agent b's runs can spawn, and theirs, as deep
// as children nest (engine.MaxDepth), each once: start-up checks their
// models too. An entry that does not load stops start-up, as an
// unreadable blueprint does (`coda validate` names it too).
func spawnedAgents(b *blueprint.Blueprint) ([]spawnedAgent, error) {
	var out []spawnedAgent
	seen := map[string]bool{b.Dir + "\x00" + b.Source: true}
	level := []*blueprint.Blueprint{b}
	for depth := 0; depth < engine.MaxDepth && len(level) > 0; depth++ {
		var next []*blueprint.Blueprint
		for _, parent := range level {
			for _, name := range parent.Order {
				for _, entry := range parent.Stages[name].Spawn {
					child, err := loadSpawned(entry, parent.Dir)
					if err != nil {
						return nil, fmt.Errorf("agent %s: stage %s spawns %q, which does not load: %w", cmp.Or(parent.Agent.Name, parent.Source), name, entry, err)
					}
					if key := child.Dir + "\x00" + child.Source; !seen[key] {
						seen[key] = true
						out = append(out, spawnedAgent{agent: child, by: name})
						next = append(next, child)
					}
				}
			}
		}
		level = next
	}
	return out, nil
}

// anyUsable returns nil when one of the specs can be used, else the first
// one's problem.
func anyUsable(cat *catalog.Catalog, specs []string) error {
	var first error
	for _, spec := range specs {
		err := cat.Check(spec)
		if err == nil {
			return nil
		}
		if errors.Is(err, catalog.ErrEffort) {
			return err // the model the stage would use cannot take the level
		}
		first = cmp.Or(first, err)
	}
	return first
}

// serve runs the ACP server on stdin/stdout.
func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f launchFlags
	fs := newFlagSet("coda")
	f.register(fs)
	maxMessage := fs.Int("max-message-bytes", acp.DefaultMaxMessageBytes, "the longest message (line) read from the editor; a longer one is answered with an error and skipped")
	commentary := fs.String("commentary", "", "how the work streams for an agent that answers: thought (as agent_thought_chunk, the answer the only message; the default) or message (as agent_message_chunk); wins over the config's commentary")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("unexpected argument %q: serving takes flags only (did you mean `coda run %s`?)", rest[0], rest[0])
	}
	if *maxMessage < 1<<10 {
		return usageError("--max-message-bytes: %d is too small (at least 1024)", *maxMessage)
	}
	if err := acp.CheckCommentary(*commentary); err != nil {
		return usageError("--commentary: %v", err)
	}
	l, err := f.prepare(stderr, true)
	if err != nil {
		return err
	}
	defer l.closeLog()
	opts := l.Options
	opts.Version, opts.MaxMessageBytes, opts.Trace = version, *maxMessage, f.trace
	opts.Commentary = cmp.Or(*commentary, opts.Commentary)
	srv, err := acp.NewServer(opts)
	if err != nil {
		return err
	}
	if f.trace && l.Engine.Taint.Resolve((*taint.Config)(l.Agent.Agent.Taint)).Policy != taint.Off {
		l.log.Warn("--trace logs every wire message whole: the private content the taint gate guards (a file read, a call that carries it) is in this log unmasked")
	}
	l.log.Debug("serving ACP", "agent", l.Agent.Agent.Name, "model", l.UserModel)
	return srv.Serve(ctx, stdin, stdout)
}
