package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/outputspec"
)

// Finding codes of the checks beyond loading (blueprint has loading's),
// stable so scripts and tests can match them.
const (
	// The answer contract.
	CodeOutputSpec      = "output-spec"      // a schema file or validator is missing or does not compile
	CodeSchemaUnchecked = "schema-unchecked" // a schema parses but is not a JSON Schema: answers would go unchecked
	CodeOutputWarning   = "output-warning"   // a schema the format cannot use, a spec retired by a later one
	CodeNoOutputStage   = "no-output-stage"  // no stage can submit an answer
	CodeCannotAnswer    = "output-stage-cannot-answer"
	CodeCannotCallTools = "stage-cannot-call-tools"
	CodeEffortNotTaken  = "effort-not-taken" // a stage's model.effort that one of its models does not take
	CodeNotStrict       = "not-strict"       // info: the answer's schema does not fit a provider's strict subset

	// The stage graph.
	CodeUnreachable      = "unreachable-stage"
	CodeCannotEnd        = "run-cannot-end" // no reachable stage lets the run end
	CodePinnedNoModel    = "pinned-without-model"
	CodeCompleteSkips    = "allow-complete-skips-output"
	CodeEndSkips         = "end-skips-output"
	CodeUnknownTool      = "unknown-tool"
	CodeToolNotOffered   = "tool-not-offered" // submit_output listed on a stage that cannot submit
	CodeNegativeLimit    = "negative-limit"
	CodeTransitionNoHint = "transition-without-hint"

	// The taint gate.
	CodeTaintAllow = "taint-allow-only-records" // policy = "allow" gates nothing
)

// Options are what Blueprint checks a blueprint against besides itself.
// The zero value checks the blueprint alone.
type Options struct {
	// Tools are the names of the tools coda has, to check available_tools
	// against; nil skips that check.
	Tools []string
	// NoTools says why the model a spec names cannot call tools, or ""
	// when it is not known to lack them (cmd/coda's model catalog, and
	// `tools = false`); nil skips that check.
	NoTools func(spec string) string
	// Efforts are the reasoning effort levels the model a spec names
	// takes (cmd/coda's catalog); nil skips that check.
	Efforts func(spec string) []string
	// Agents loads the agents spawn lists name; nil skips that check.
	Agents blueprint.Loader
	// Served says why no configured provider serves the model a spec
	// names, or "" when one does (its key aside: that is the
	// environment's); nil skips that check (served.go).
	Served func(spec string) string
}

// Source checks a blueprint's text. It reports each loading problem as a
// finding (every unknown key, every transition to a missing stage) and,
// when the stages still make sense without them, goes on with Blueprint.
// The blueprint is nil when it could not be read at all. dir is the
// directory its relative paths resolve in ("" for a bundled agent).
func Source(data []byte, source, dir string, opts Options) (*blueprint.Blueprint, []blueprint.Finding) {
	b, fs := blueprint.Load(data, source)
	if b == nil {
		return nil, fs
	}
	b.Dir = dir
	return b, append(fs, Blueprint(b, opts)...)
}

// Blueprint checks a loaded blueprint for what loading does not catch: its
// answer contracts compile, the models of stages that must call tools can,
// every stage is reachable, and no path ends the run without the answer it
// owes.
func Blueprint(b *blueprint.Blueprint, opts Options) []blueprint.Finding {
	var fs findings
	lintOutputs(&fs, b)
	lintGraph(&fs, b)
	lintDelegation(&fs, b, opts)
	lintTaint(&fs, b)
	tools := opts.Tools
	for _, name := range b.Order {
		s := b.Stages[name]
		key := "stages." + name
		lintModels(&fs, s, opts.NoTools)
		lintServed(&fs, s, opts.Served)
		lintEffort(&fs, s, opts.Efforts)
		if s.MaxIterations < 0 {
			fs.add(blueprint.SeverityError, CodeNegativeLimit, key+".max_iterations", "%d: give a positive number of model calls, or leave it out for %d", s.MaxIterations, blueprint.DefaultMaxIterations)
		}
		if s.MaxRevisits != nil && *s.MaxRevisits < 0 {
			fs.add(blueprint.SeverityError, CodeNegativeLimit, key+".max_revisits", "%d: give 0 or more nudges, or leave it out for %d", *s.MaxRevisits, blueprint.DefaultMaxRevisits)
		}
		if s.MaxRepairs != nil && *s.MaxRepairs < 0 {
			fs.add(blueprint.SeverityError, CodeNegativeLimit, key+".max_repairs", "%d: give 0 or more repairs of refused answers, or leave it out for %d", *s.MaxRepairs, blueprint.DefaultMaxRepairs)
		}
		for _, t := range s.AvailableTools {
			switch {
			case t == blueprint.ToolSubmitOutput && !s.CanSubmit():
				// Listing it is harmless where the stage can submit (DESIGN
				// §12 does); here it is not offered, which the author may
				// not expect.
				fs.add(blueprint.SeverityWarning, CodeToolNotOffered, key+".available_tools", "submit_output is not offered here: a stage gets it from mode = \"output\" or require_output = true, and this stage has neither")
			case t == blueprint.ToolSubmitOutput:
			case t == blueprint.ToolTransition:
				fs.add(blueprint.SeverityError, CodeUnknownTool, key+".available_tools", "transition is not listed: a stage gets it from its [stages.%s.transitions.NAME] tables", name)
			case delegationTool(t):
				lintListed(&fs, s, t)
			case blueprint.IsMCPRef(t):
				// MCP servers come with the session: only the form is checked.
				if why := blueprint.CheckMCPRef(t); why != "" {
					fs.add(blueprint.SeverityError, CodeUnknownTool, key+".available_tools", "%q names no MCP server: %s", t, why)
				}
			case tools != nil && !slices.Contains(tools, t):
				fs.add(blueprint.SeverityError, CodeUnknownTool, key+".available_tools", "coda has no tool %q; it has %s", t, strings.Join(slices.Sorted(slices.Values(tools)), ", "))
			}
		}
		for _, to := range s.TransitionOrder {
			if tr := s.Transitions[to]; tr == nil || strings.TrimSpace(tr.Hint) == "" {
				fs.add(blueprint.SeverityWarning, CodeTransitionNoHint, key+".transitions."+to, "no hint: the model chooses transitions by their hints; say when to go to %s", to)
			}
		}
	}
	return fs
}

// lintOutputs compiles each answering stage's contract on its own, so a
// problem is reported against the stage it belongs to.
func lintOutputs(fs *findings, b *blueprint.Blueprint) {
	answers := false
	for _, name := range b.Order {
		s := b.Stages[name]
		if !s.CanSubmit() {
			continue
		}
		answers = true
		key := "stages." + name + ".output"
		one := *b
		one.Order = []string{name}
		outs, err := blueprint.CompileOutputs(&one, outputspec.Levels{})
		if err != nil {
			fs.add(blueprint.SeverityError, CodeOutputSpec, key, "%v", err)
			continue
		}
		c := outs.ByStage[name]
		var compiled []string
		if c != nil {
			compiled = c.Warnings()
		}
		// outs.Warnings may repeat the contract's own: those are reported
		// below, with their severity.
		for _, w := range outs.Warnings {
			if !slices.Contains(compiled, w) {
				fs.add(blueprint.SeverityWarning, CodeOutputWarning, key, "%s", w)
			}
		}
		for _, w := range compiled {
			if w == c.SchemaUnchecked() {
				fs.add(blueprint.SeverityError, CodeSchemaUnchecked, key, "%s (answers would be recorded without this check)", w)
				continue
			}
			fs.add(blueprint.SeverityWarning, CodeOutputWarning, key, "%s", w)
		}
		if why := notStrict(c); why != "" {
			fs.add(blueprint.SeverityInfo, CodeNotStrict, key, "not strict%s (coda checks every answer all the same)", why)
		}
	}
	if !answers {
		fs.add(blueprint.SeverityWarning, CodeNoOutputStage, "", "no stage can submit an answer (mode = \"output\" or require_output = true): runs will finish without one")
	}
}

// notStrict says, for a json answer with a schema that is asked strict
// where a provider can (structured is not prompted nor native), why the
// schema is not sent strict, as written nor as a projection, and to which
// providers: ": the top level requires \"b\", which its properties do not
// describe"; "" when both families take it, or there is nothing to say
// (DESIGN §17: a projection is never narrower than the schema).
func notStrict(c *outputspec.Contract) string {
	if c == nil || !c.Typed() || c.ReplySchema() == nil || outputspec.StructuredRank(c.Structured()) < 3 {
		return ""
	}
	o, a := c.StrictFit(outputspec.StrictOpenAI), c.StrictFit(outputspec.StrictAnthropic)
	switch {
	case o == "" && a == "":
		return ""
	case o == a:
		return ": " + o
	case a == "":
		return " for OpenAI: " + o
	case o == "":
		return " for Anthropic: " + a
	}
	return " for OpenAI: " + o + "; for Anthropic: " + a
}

// lintGraph checks the stage graph: every stage reachable from the start,
// and no way for the run to end before a stage that owes the answer.
func lintGraph(fs *findings, b *blueprint.Blueprint) {
	start := b.StartStage()
	if start == nil {
		return
	}
	reached := walkStages(b, start.Name, func(*blueprint.Stage) bool { return true })
	// bare holds the stages the run can be in without having passed a
	// stage that owes the answer (which nudges, and then forces, it).
	bare := walkStages(b, start.Name, func(s *blueprint.Stage) bool { return !s.OwesOutput() })
	owed, canEnd := false, false
	for _, name := range b.Order {
		s := b.Stages[name]
		owed = owed || s.OwesOutput()
		canEnd = canEnd || (reached[name] && (len(s.TransitionOrder) == 0 || s.AllowComplete))
	}
	if !canEnd {
		fs.add(blueprint.SeverityError, CodeCannotEnd, "", "every stage the run can reach has transitions and none has allow_complete: the run can only stop at the cap on model calls; give a last stage no transitions")
	}
	for _, name := range b.Order {
		s := b.Stages[name]
		key := "stages." + name
		if !reached[name] {
			if !workedFrom(b, name, reached) {
				fs.add(blueprint.SeverityWarning, CodeUnreachable, key, "no transition reaches this stage from the start stage %s", start.Name)
			}
			continue
		}
		if !owed || s.OwesOutput() || !bare[name] {
			continue
		}
		if s.AllowComplete {
			// A warning, as Leviath grades it: the author may mean DONE for
			// the runs that need no answer; a run that takes it says so
			// (engine.FlagDoneBeforeAnswer).
			fs.add(blueprint.SeverityWarning, CodeCompleteSkips, key+".allow_complete", "DONE here ends the run, and a run can reach this stage before any stage that owes the answer (%s): a run that takes it ends without one, flagged done_before_answer", strings.Join(owingStages(b), ", "))
		}
		if len(s.TransitionOrder) == 0 && !s.CanSubmit() {
			fs.add(blueprint.SeverityWarning, CodeEndSkips, key, "the run ends here (no transitions), and can reach this stage before any stage that owes the answer (%s): it would end without one", strings.Join(owingStages(b), ", "))
		}
	}
}

// walkStages returns the stages reachable from start, following the
// transitions of the stages for which through returns true.
func walkStages(b *blueprint.Blueprint, start string, through func(*blueprint.Stage) bool) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		s := b.Stages[name]
		if seen[name] || s == nil {
			return
		}
		seen[name] = true
		if !through(s) {
			return
		}
		for _, to := range s.TransitionOrder {
			walk(to)
		}
	}
	walk(start)
	return seen
}

func owingStages(b *blueprint.Blueprint) []string {
	var out []string
	for _, name := range b.Order {
		if b.Stages[name].OwesOutput() {
			out = append(out, name)
		}
	}
	return out
}

// lintModels reports stage models known to lack tool calling (DESIGN
// §15). Such a model is called without tools: it answers by reply, so an
// answering stage is fine unless it takes no replies
// (answer_from_reply = false); but a stage that needs tools to move on
// (transitions to choose, DONE, tools to use) loses them.
func lintModels(fs *findings, s *blueprint.Stage, noTools func(spec string) string) {
	if !s.UserDefaultAllowed() && len(s.Model.Models) == 0 {
		fs.add(blueprint.SeverityWarning, CodePinnedNoModel, "stages."+s.Name+".model", "allow_user_default = false with no models: --model is ignored here, and the stage runs only when the config file sets default_model; list the models it is pinned to")
	}
	if noTools == nil {
		return
	}
	for _, spec := range s.Model.Models {
		why := noTools(spec)
		if why == "" {
			continue
		}
		key := "stages." + s.Name + ".model"
		switch {
		case s.CanSubmit() && !s.AnswersFromReply():
			fs.add(blueprint.SeverityError, CodeCannotAnswer, key, "%s cannot call tools (%s), and this stage takes its answer only through the submit_output tool (answer_from_reply = false): choose a model with tool calling, or let a reply be the answer", spec, why)
		case len(s.TransitionOrder) > 0 || s.AllowComplete:
			fs.add(blueprint.SeverityWarning, CodeCannotCallTools, key, "%s cannot call tools (%s): it cannot choose where to go next, so this stage always goes on to its first way out (%s)%s", spec, why, s.WaysOut()[0], toolsOutOfReach(s))
		case len(s.AvailableTools) > 0:
			fs.add(blueprint.SeverityWarning, CodeCannotCallTools, key, "%s cannot call tools (%s)%s", spec, why, toolsOutOfReach(s))
		}
	}
}

// lintEffort warns of a stage's model.effort that one of its models does
// not take: that model is sent the nearest level it takes (and start-up
// refuses it when it is the one the stage calls first).
func lintEffort(fs *findings, s *blueprint.Stage, efforts func(spec string) []string) {
	e := s.Model.Effort
	if e == "" || efforts == nil {
		return
	}
	for _, spec := range s.Model.Models {
		takes := efforts(spec)
		if len(takes) == 0 || slices.Contains(takes, e) {
			continue
		}
		if slices.Equal(takes, []string{"off"}) {
			fs.add(blueprint.SeverityWarning, CodeEffortNotTaken, "stages."+s.Name+".model.effort", "%s does not reason: it takes no effort but off, and is sent none", spec)
			continue
		}
		fs.add(blueprint.SeverityWarning, CodeEffortNotTaken, "stages."+s.Name+".model.effort", "%s takes %s, not %s: it is sent the nearest below", spec, strings.Join(takes, ", "), e)
	}
}

// toolsOutOfReach names the stage's tools a model without tool calling
// cannot use, after a comma; "" when there are none.
func toolsOutOfReach(s *blueprint.Stage) string {
	if len(s.AvailableTools) == 0 {
		return ""
	}
	return ", and its tools (" + strings.Join(s.AvailableTools, ", ") + ") are out of its reach"
}

// lintTaint warns of a gate turned on only to record: `allow` lets every
// call through. (The policy is named as [agent.taint] spells it: the
// linter does not import the gate.)
func lintTaint(fs *findings, b *blueprint.Blueprint) {
	if c := b.Agent.Taint; c != nil && c.Policy == "allow" {
		fs.add(blueprint.SeverityWarning, CodeTaintAllow, "agent.taint.policy", "\"allow\" lets private content through every answer, shell command and MCP call; it only records them in taint_audit.json: say \"ask\" or \"deny\" to guard them")
	}
}

// findings collects findings in the order they are found.
type findings []blueprint.Finding

func (fs *findings) add(sev, code, key, format string, args ...any) {
	*fs = append(*fs, blueprint.Finding{Severity: sev, Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
}
