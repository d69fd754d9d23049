package engine

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/outputspec"
)

// Finding severities. `coda validate` exits 1 when any finding is an error.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding codes, stable so scripts and tests can match them.
const (
	// Loading: what ParseBlueprint refuses, one finding per problem.
	CodeTOML         = "toml"          // the file is not TOML, or a value has the wrong type
	CodeUnknownKey   = "unknown-key"   // a key no blueprint table has
	CodeMissingStage = "missing-stage" // agent.start or a transition names no stage
	CodeBadValue     = "bad-value"     // a mode or on_validator_error that is not one of its choices
	CodeNoStages     = "no-stages"     // the blueprint has no [stages.NAME]
	CodeLoad         = "load"          // any other reason the blueprint does not load

	// The answer contract.
	CodeOutputSpec      = "output-spec"      // a schema file or validator is missing or does not compile
	CodeSchemaUnchecked = "schema-unchecked" // a schema parses but is not a JSON Schema: answers would go unchecked
	CodeOutputWarning   = "output-warning"   // a schema the format cannot use, a spec retired by a later one
	CodeNoOutputStage   = "no-output-stage"  // no stage can submit an answer
	CodeCannotAnswer    = "output-stage-cannot-answer"
	CodeCannotCallTools = "stage-cannot-call-tools"

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

// A Finding is something `coda validate` reports about a blueprint.
type Finding struct {
	Severity string
	Code     string
	// Key is the blueprint key the finding is about, such as
	// "stages.review" or "stages.review.transitions.report"; "" for the
	// whole blueprint.
	Key     string
	Message string
}

func (f Finding) String() string {
	where := ""
	if f.Key != "" {
		where = " " + f.Key + ":"
	}
	return fmt.Sprintf("%s[%s]%s %s", f.Severity, f.Code, where, f.Message)
}

// findings collects findings in the order they are found.
type findings []Finding

func (fs *findings) add(sev, code, key, format string, args ...any) {
	*fs = append(*fs, Finding{Severity: sev, Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
}

// LintOptions are what Lint checks a blueprint against besides itself.
// The zero value checks the blueprint alone.
type LintOptions struct {
	// Tools are the tools coda has, to check available_tools against;
	// nil skips that check.
	Tools map[string]Tool
	// Models says what is known of the models stages name (which cannot
	// call tools); nil skips that check.
	Models ModelFacts
	// Agents loads the agents spawn lists name; nil skips that check.
	Agents AgentLoader
}

// LintSource checks a blueprint's text. It reports each loading problem as
// a finding (every unknown key, every transition to a missing stage) and,
// when the stages still make sense without them, goes on with Lint. The
// blueprint is nil when it could not be read at all. dir is the directory
// its relative paths resolve in ("" for a bundled agent).
func LintSource(data []byte, source, dir string, opts LintOptions) (*Blueprint, []Finding) {
	b, fs := parse(data, source)
	if b == nil {
		return nil, fs
	}
	b.Dir = dir
	return b, append(fs, Lint(b, opts)...)
}

// Lint checks a loaded blueprint for what loading does not catch: its
// answer contracts compile, the models of stages that must call tools can,
// every stage is reachable, and no path ends the run without the answer it
// owes.
func Lint(b *Blueprint, opts LintOptions) []Finding {
	var fs findings
	lintOutputs(&fs, b)
	lintGraph(&fs, b)
	lintDelegation(&fs, b, opts)
	lintTaint(&fs, b)
	tools := opts.Tools
	for _, name := range b.Order {
		s := b.Stages[name]
		key := "stages." + name
		lintModels(&fs, s, opts.Models)
		if s.MaxIterations < 0 {
			fs.add(SeverityError, CodeNegativeLimit, key+".max_iterations", "%d: give a positive number of model calls, or leave it out for %d", s.MaxIterations, DefaultMaxIterations)
		}
		if s.MaxRevisits != nil && *s.MaxRevisits < 0 {
			fs.add(SeverityError, CodeNegativeLimit, key+".max_revisits", "%d: give 0 or more nudges, or leave it out for %d", *s.MaxRevisits, DefaultMaxRevisits)
		}
		if s.MaxRepairs != nil && *s.MaxRepairs < 0 {
			fs.add(SeverityError, CodeNegativeLimit, key+".max_repairs", "%d: give 0 or more repairs of refused answers, or leave it out for %d", *s.MaxRepairs, DefaultMaxRepairs)
		}
		for _, t := range s.AvailableTools {
			switch {
			case t == ToolSubmitOutput && !s.CanSubmit():
				// Listing it is harmless where the stage can submit (DESIGN
				// §12 does); here it is not offered, which the author may
				// not expect.
				fs.add(SeverityWarning, CodeToolNotOffered, key+".available_tools", "submit_output is not offered here: a stage gets it from mode = \"output\" or require_output = true, and this stage has neither")
			case t == ToolSubmitOutput:
			case t == ToolTransition:
				fs.add(SeverityError, CodeUnknownTool, key+".available_tools", "transition is not listed: a stage gets it from its [stages.%s.transitions.NAME] tables", name)
			case delegationTool(t):
				lintListed(&fs, s, t)
			case IsMCPRef(t):
				// MCP servers come with the session: only the form is checked.
				if why := CheckMCPRef(t); why != "" {
					fs.add(SeverityError, CodeUnknownTool, key+".available_tools", "%q names no MCP server: %s", t, why)
				}
			case tools != nil && tools[t] == nil:
				fs.add(SeverityError, CodeUnknownTool, key+".available_tools", "coda has no tool %q; it has %s", t, strings.Join(toolNames(tools), ", "))
			}
		}
		for _, to := range s.TransitionOrder {
			if tr := s.Transitions[to]; tr == nil || strings.TrimSpace(tr.Hint) == "" {
				fs.add(SeverityWarning, CodeTransitionNoHint, key+".transitions."+to, "no hint: the model chooses transitions by their hints; say when to go to %s", to)
			}
		}
	}
	return fs
}

// lintOutputs compiles each answering stage's contract on its own, so a
// problem is reported against the stage it belongs to.
func lintOutputs(fs *findings, b *Blueprint) {
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
		outs, err := CompileOutputs(&one, outputspec.Levels{})
		if err != nil {
			fs.add(SeverityError, CodeOutputSpec, key, "%v", err)
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
				fs.add(SeverityWarning, CodeOutputWarning, key, "%s", w)
			}
		}
		for _, w := range compiled {
			if w == c.SchemaUnchecked() {
				fs.add(SeverityError, CodeSchemaUnchecked, key, "%s (answers would be recorded without this check)", w)
				continue
			}
			fs.add(SeverityWarning, CodeOutputWarning, key, "%s", w)
		}
	}
	if !answers {
		fs.add(SeverityWarning, CodeNoOutputStage, "", "no stage can submit an answer (mode = \"output\" or require_output = true): runs will finish without one")
	}
}

// lintGraph checks the stage graph: every stage reachable from the start,
// and no way for the run to end before a stage that owes the answer.
func lintGraph(fs *findings, b *Blueprint) {
	start := b.StartStage()
	if start == nil {
		return
	}
	reached := walkStages(b, start.Name, func(*Stage) bool { return true })
	// bare holds the stages the run can be in without having passed a
	// stage that owes the answer (which nudges, and then forces, it).
	bare := walkStages(b, start.Name, func(s *Stage) bool { return !s.OwesOutput() })
	owed, canEnd := false, false
	for _, name := range b.Order {
		s := b.Stages[name]
		owed = owed || s.OwesOutput()
		canEnd = canEnd || (reached[name] && (len(s.TransitionOrder) == 0 || s.AllowComplete))
	}
	if !canEnd {
		fs.add(SeverityError, CodeCannotEnd, "", "every stage the run can reach has transitions and none has allow_complete: the run can only stop at the cap on model calls; give a last stage no transitions")
	}
	for _, name := range b.Order {
		s := b.Stages[name]
		key := "stages." + name
		if !reached[name] {
			if !workedFrom(b, name, reached) {
				fs.add(SeverityWarning, CodeUnreachable, key, "no transition reaches this stage from the start stage %s", start.Name)
			}
			continue
		}
		if !owed || s.OwesOutput() || !bare[name] {
			continue
		}
		if s.AllowComplete {
			fs.add(SeverityError, CodeCompleteSkips, key+".allow_complete", "DONE here ends the run, and a run can reach this stage before any stage that owes the answer (%s): it would end without one", strings.Join(owingStages(b), ", "))
		}
		if len(s.TransitionOrder) == 0 && !s.CanSubmit() {
			fs.add(SeverityWarning, CodeEndSkips, key, "the run ends here (no transitions), and can reach this stage before any stage that owes the answer (%s): it would end without one", strings.Join(owingStages(b), ", "))
		}
	}
}

// walkStages returns the stages reachable from start, following the
// transitions of the stages for which through returns true.
func walkStages(b *Blueprint, start string, through func(*Stage) bool) map[string]bool {
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

func owingStages(b *Blueprint) []string {
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
func lintModels(fs *findings, s *Stage, facts ModelFacts) {
	if !s.UserDefaultAllowed() && len(s.Model.Models) == 0 {
		fs.add(SeverityWarning, CodePinnedNoModel, "stages."+s.Name+".model", "allow_user_default = false with no models: --model is ignored here, and the stage runs only when the config file sets default_model; list the models it is pinned to")
	}
	if facts == nil {
		return
	}
	for _, spec := range s.Model.Models {
		why := facts(spec).NoTools
		if why == "" {
			continue
		}
		key := "stages." + s.Name + ".model"
		switch {
		case s.CanSubmit() && !s.AnswersFromReply():
			fs.add(SeverityError, CodeCannotAnswer, key, "%s cannot call tools (%s), and this stage takes its answer only through the submit_output tool (answer_from_reply = false): choose a model with tool calling, or let a reply be the answer", spec, why)
		case len(s.TransitionOrder) > 0 || s.AllowComplete:
			fs.add(SeverityWarning, CodeCannotCallTools, key, "%s cannot call tools (%s): it cannot choose where to go next, so this stage always goes on to its first way out (%s)%s", spec, why, waysOut(s)[0], toolsOutOfReach(s))
		case len(s.AvailableTools) > 0:
			fs.add(SeverityWarning, CodeCannotCallTools, key, "%s cannot call tools (%s)%s", spec, why, toolsOutOfReach(s))
		}
	}
}

// toolsOutOfReach names the stage's tools a model without tool calling
// cannot use, after a comma; "" when there are none.
func toolsOutOfReach(s *Stage) string {
	if len(s.AvailableTools) == 0 {
		return ""
	}
	return ", and its tools (" + strings.Join(s.AvailableTools, ", ") + ") are out of its reach"
}

func toolNames(tools map[string]Tool) []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// suggest names the known key closest to an unknown one, or "".
func suggest(k toml.Key) string {
	if len(k) == 0 {
		return ""
	}
	parent, last := k[:len(k)-1], k[len(k)-1]
	best, bestD := "", 3
	for _, cand := range knownKeys(parent) {
		if d := editDistance(last, cand); d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" {
		return ""
	}
	return strings.Join(append(append([]string(nil), parent...), best), ".")
}

// knownKeys lists the keys the table at parent may hold.
func knownKeys(parent []string) []string {
	var t reflect.Type
	switch {
	case len(parent) == 0:
		t = reflect.TypeOf(Blueprint{})
	case len(parent) == 1 && parent[0] == "agent":
		t = reflect.TypeOf(AgentConfig{})
	case len(parent) == 2 && parent[0] == "agent" && parent[1] == "taint":
		t = reflect.TypeOf(taint.Config{})
	case len(parent) == 3 && parent[0] == "agent" && parent[1] == "commands":
		t = reflect.TypeOf(SlashCommand{})
	case len(parent) == 2 && parent[0] == "agent" && parent[1] == "output",
		len(parent) == 3 && parent[0] == "stages" && parent[2] == "output":
		t = reflect.TypeOf(outputspec.Spec{})
	case len(parent) >= 3 && parent[len(parent)-1] == "artifacts" && parent[len(parent)-2] == "output":
		t = reflect.TypeOf(outputspec.ArtifactDecl{})
	case len(parent) == 2 && parent[0] == "stages":
		t = reflect.TypeOf(Stage{})
	case len(parent) == 3 && parent[0] == "stages" && parent[2] == "model":
		t = reflect.TypeOf(StageModel{})
	case len(parent) == 4 && parent[0] == "stages" && parent[2] == "transitions":
		t = reflect.TypeOf(Transition{})
	case len(parent) == 3 && parent[0] == "stages" && parent[2] == "fan_out":
		t = reflect.TypeOf(FanOut{})
	default:
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("toml"); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
