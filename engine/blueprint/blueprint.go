package blueprint

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/outputspec"
)

// A Blueprint configures an agent: its stages, their models, tools and
// transitions, and the answer's default shape.
type Blueprint struct {
	Agent  AgentConfig       `toml:"agent"`
	Stages map[string]*Stage `toml:"stages"`

	// Order lists the stage names as the file gives them.
	Order []string `toml:"-"`
	// Dir is the blueprint's directory; its relative paths resolve there.
	// Empty for bundled agents.
	Dir string `toml:"-"`
	// Source names where the blueprint came from, for messages.
	Source string `toml:"-"`
	// OverwriteArtifacts is overwrite_artifacts for the answers whose
	// specs do not say (the config's [mime] overwrite_artifacts); nil
	// leaves it unset (outputs.go).
	OverwriteArtifacts *bool `toml:"-"`
}

// AgentConfig is the [agent] table.
type AgentConfig struct {
	Name        string           `toml:"name"`
	Description string           `toml:"description"`
	Start       string           `toml:"start"`
	Output      *outputspec.Spec `toml:"output"`
	// Taint is [agent.taint]: the taint gate for this agent (taint.go).
	Taint *TaintConfig `toml:"taint"`
	// Commands are [agent.commands.NAME]: slash commands the agent offers
	// (commands.go).
	Commands map[string]*SlashCommand `toml:"commands"`
	// ProjectInstructions = false keeps the project's AGENTS.md out of
	// the stages' prompts (DESIGN §8); unset gives it to them.
	ProjectInstructions *bool `toml:"project_instructions"`
}

// ReadsProjectInstructions reports whether the agent's stages are given
// the project's AGENTS.md.
func (a AgentConfig) ReadsProjectInstructions() bool {
	return a.ProjectInstructions == nil || *a.ProjectInstructions
}

// Stage modes.
const (
	ModeAutonomous = "autonomous"
	ModeOutput     = "output"
)

// A Stage is one [stages.NAME] table.
type Stage struct {
	Name           string     `toml:"-"`
	Mode           string     `toml:"mode"`
	Model          StageModel `toml:"model"`
	Description    string     `toml:"description"`
	SystemPrompt   string     `toml:"system_prompt"`
	MaxIterations  int        `toml:"max_iterations"`
	MaxRevisits    *int       `toml:"max_revisits"`
	AvailableTools []string   `toml:"available_tools"`
	AllowComplete  bool       `toml:"allow_complete"`
	// TransitionPrompt is the stage's own words for asking the model where
	// to go next; the ways out are appended (engine/transition.go).
	TransitionPrompt string                 `toml:"transition_prompt"`
	RequireOutput    *bool                  `toml:"require_output"`
	Transitions      map[string]*Transition `toml:"transitions"`
	Output           *outputspec.Spec       `toml:"output"`
	TransitionOrder  []string               `toml:"-"`

	// Delegation (DESIGN §12): a [stages.X.fan_out] table offers fan_out
	// (engine/subrun_fan_out.go); allow_as_worker lets fan_out run this
	// stage; spawn offers spawn_agent and wait_for_agent
	// (engine/subrun_spawn.go).
	FanOut        *FanOut  `toml:"fan_out"`
	AllowAsWorker bool     `toml:"allow_as_worker"`
	Spawn         []string `toml:"spawn"`
	// The repair loop and answers from every model (DESIGN §15):
	// repair.go, reply.go, unavailable.go.
	MaxRepairs       *int  `toml:"max_repairs"`
	AnswerFromReply  *bool `toml:"answer_from_reply"`
	AllowUnavailable *bool `toml:"allow_unavailable"`
}

// StageModel is a stage's `model = { models = [...] }` (models.go).
type StageModel struct {
	// Models are the stage's model specs in order, as Load reads them from
	// the entries: "PROVIDER:MODEL", a bare model id ("claude-sonnet-5")
	// or OpenRouter's "vendor/model", which cmd/coda resolves through its
	// catalog and config.
	Models []string `toml:"-"`
	// Entries are `models` as the file writes them: strings, or tables
	// with provider and model (Leviath's [[stages.X.model.models]]).
	Entries          []any `toml:"models"`
	AllowUserDefault *bool `toml:"allow_user_default"`
	// Parameters are sent with every call of the stage's models, the
	// common ones under each API's own name, the rest as written
	// (llm.Request.Params).
	Parameters map[string]any `toml:"parameters"`
	// RequestTimeoutSecs bounds one model call of the stage, every try
	// included (llm.Request.Timeout); 0 leaves the provider's.
	RequestTimeoutSecs int `toml:"request_timeout_secs"`
	// Effort is the reasoning effort the stage asks of its models
	// (DESIGN §16), one of EffortLevels; "" leaves it to the config's and
	// the model's. The user's (--effort, the session's effort option)
	// wins where the stage takes the user's model (EffortFor).
	Effort string `toml:"effort"`
}

// Timeout is the stage's limit on one model call, every try included;
// 0 leaves the provider's.
func (m StageModel) Timeout() time.Duration {
	return time.Duration(m.RequestTimeoutSecs) * time.Second
}

// EffortLevels are the reasoning effort levels a blueprint may name, in
// rising order: llm.EffortOff to llm.EffortMax (the engine's test
// holds the two lists equal). Which a model takes is its catalog entry's.
var EffortLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}

// A Transition is a way out of a stage.
type Transition struct {
	Hint string `toml:"hint"`
}

// Defaults for stage limits: model calls per visit, nudges of an owed
// answer, and refused submissions a visit repairs.
const (
	DefaultMaxIterations = 30
	DefaultMaxRevisits   = 3
	DefaultMaxRepairs    = 4
)

// OwesOutput reports whether the stage must submit an answer.
func (s *Stage) OwesOutput() bool {
	if s.RequireOutput != nil {
		return *s.RequireOutput
	}
	return s.Mode == ModeOutput
}

// CanSubmit reports whether the stage is offered submit_output.
func (s *Stage) CanSubmit() bool { return s.Mode == ModeOutput || s.OwesOutput() }

// CheckAnswers says why the agent gives no answer: no stage can hand one
// in, so an output spec has nothing to shape (DESIGN §15, honest
// capability). Nil when a stage can.
func (b *Blueprint) CheckAnswers() error {
	for _, s := range b.Stages {
		if s.CanSubmit() {
			return nil
		}
	}
	return fmt.Errorf("agent %s gives no answer (no stage has mode = \"output\" or require_output = true)", cmp.Or(b.Agent.Name, b.Source))
}

// Iterations is the stage's model-call budget per visit.
func (s *Stage) Iterations() int {
	if s.MaxIterations > 0 {
		return s.MaxIterations
	}
	return DefaultMaxIterations
}

// Revisits is how many times an owed output is nudged.
func (s *Stage) Revisits() int {
	if s.MaxRevisits != nil {
		return *s.MaxRevisits
	}
	return DefaultMaxRevisits
}

// Repairs is how many refused submissions a visit of the stage repairs.
func (s *Stage) Repairs() int {
	if s.MaxRepairs != nil {
		return *s.MaxRepairs
	}
	return DefaultMaxRepairs
}

// AnswersFromReply reports whether a reply may be the stage's answer.
func (s *Stage) AnswersFromReply() bool { return s.AnswerFromReply == nil || *s.AnswerFromReply }

// UnavailableAllowed reports whether the stage lets the model declare the
// answer unavailable.
func (s *Stage) UnavailableAllowed() bool { return s.AllowUnavailable == nil || *s.AllowUnavailable }

// UserDefaultAllowed reports whether --model overrides the stage's models.
func (s *Stage) UserDefaultAllowed() bool {
	return s.Model.AllowUserDefault == nil || *s.Model.AllowUserDefault
}

// EffortFor is the reasoning effort the stage asks for when the user's is
// userEffort: the user's where the stage takes the user's model (as
// ModelCandidates does --model), else the stage's own; "" when neither
// says.
func (s *Stage) EffortFor(userEffort string) string {
	if userEffort != "" && s.UserDefaultAllowed() {
		return userEffort
	}
	return s.Model.Effort
}

// ModelCandidates are the model specs the stage tries, in order: the
// user's --model where the stage allows it, else the stage's own list, else
// the configured default. Empty when there is none.
func (s *Stage) ModelCandidates(userModel, defaultModel string) []string {
	switch {
	case userModel != "" && s.UserDefaultAllowed():
		return []string{userModel}
	case len(s.Model.Models) > 0:
		return s.Model.Models
	case defaultModel != "":
		return []string{defaultModel}
	}
	return nil
}

// StartStage returns the stage a run enters.
func (b *Blueprint) StartStage() *Stage {
	if b.Agent.Start != "" {
		return b.Stages[b.Agent.Start]
	}
	if len(b.Order) > 0 {
		return b.Stages[b.Order[0]]
	}
	return nil
}

// Parse decodes a blueprint strictly: unknown keys, transitions
// to missing stages and bad values are errors naming their key. source
// names the file for messages. All the problems found go in the one-line
// error; `coda validate` lists them one a line.
func Parse(data []byte, source string) (*Blueprint, error) {
	b, fs := Load(data, source)
	var problems []string
	for _, f := range fs {
		if f.Severity != SeverityError {
			continue
		}
		if f.Key != "" {
			problems = append(problems, f.Key+": "+f.Message)
		} else {
			problems = append(problems, f.Message)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", source, strings.Join(problems, "; "))
	}
	return b, nil
}

// Load decodes a blueprint and names every problem in it, one Finding
// each (what `coda validate` lists). It returns the blueprint as well when
// the problems (unknown keys, transitions to missing stages, which are
// dropped) leave a stage graph worth linting (engine/lint), and nil when
// they do not.
func Load(data []byte, source string) (*Blueprint, []Finding) {
	var fs findings
	var b Blueprint
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&b)
	if err != nil {
		msg := err.Error()
		var perr toml.ParseError
		if errors.As(err, &perr) {
			msg = fmt.Sprintf("line %d: %s", perr.Position.Line, perr.Message)
		}
		fs.add(SeverityError, CodeTOML, "", "%s", msg)
		return nil, fs
	}
	var unknown []toml.Key
	for _, k := range md.Undecoded() {
		if inSchema(k) || inModel(k) || under(k, unknown) {
			continue
		}
		unknown = append(unknown, k)
		msg := "unknown key"
		if why := leviathKey(k); why != "" {
			msg = why
		} else if s := suggest(k); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		fs.add(SeverityError, CodeUnknownKey, k.String(), "%s", msg)
	}
	// Keys come in file order: stages.NAME, stages.NAME.transitions.TO.
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "stages" && !slices.Contains(b.Order, k[1]) {
			b.Order = append(b.Order, k[1])
		}
		if len(k) == 4 && k[0] == "stages" && k[2] == "transitions" {
			if s := b.Stages[k[1]]; s != nil {
				s.TransitionOrder = append(s.TransitionOrder, k[3])
			}
		}
	}
	if len(b.Stages) == 0 {
		fs.add(SeverityError, CodeNoStages, "", "no stages: add a [stages.NAME] table")
		return nil, fs
	}
	checkTaint(&fs, b.Agent.Taint)
	checkCommands(&fs, &b)
	if b.Agent.Output != nil {
		checkStructured(&fs, "agent.output.structured", b.Agent.Output.Structured)
		checkValidator(&fs, "agent.output.validator", b.Agent.Output.Validator)
	}
	usable := true
	if b.Agent.Start != "" && b.Stages[b.Agent.Start] == nil {
		fs.add(SeverityError, CodeMissingStage, "agent.start", "no stage is named %q; the stages are %s", b.Agent.Start, strings.Join(b.Order, ", "))
		usable = false
	}
	for _, name := range b.Order {
		s := b.Stages[name]
		if s == nil {
			fs.add(SeverityError, CodeLoad, "stages."+name, "the stage is empty")
			usable = false
			continue
		}
		s.Name = name
		switch s.Mode {
		case "", ModeAutonomous, ModeOutput:
		default:
			fs.add(SeverityError, CodeBadValue, "stages."+name+".mode", "%q is neither \"autonomous\" nor \"output\"", s.Mode)
			usable = false
		}
		checkModel(&fs, s)
		if e := s.Model.Effort; e != "" && !slices.Contains(EffortLevels, e) {
			fs.add(SeverityError, CodeBadValue, "stages."+name+".model.effort", "%q is not an effort level: want one of %s", e, strings.Join(EffortLevels, ", "))
		}
		if s.Output != nil {
			switch s.Output.OnValidatorError {
			case "", "reject", "accept":
			default:
				fs.add(SeverityError, CodeBadValue, "stages."+name+".output.on_validator_error", "%q is neither \"reject\" nor \"accept\"", s.Output.OnValidatorError)
			}
			checkStructured(&fs, "stages."+name+".output.structured", s.Output.Structured)
			checkValidator(&fs, "stages."+name+".output.validator", s.Output.Validator)
		}
		checkDelegation(&fs, s)
		kept := s.TransitionOrder[:0]
		for _, to := range s.TransitionOrder {
			if b.Stages[to] == nil {
				fs.add(SeverityError, CodeMissingStage, "stages."+name+".transitions."+to, "no stage is named %q; the stages are %s", to, strings.Join(b.Order, ", "))
				continue
			}
			kept = append(kept, to)
		}
		s.TransitionOrder = kept
	}
	if !usable {
		return nil, fs
	}
	b.Source = source
	return &b, fs
}

// checkStructured finds a structured (DESIGN §17) that is not one of its
// values.
func checkStructured(fs *findings, key, value string) {
	if err := outputspec.CheckStructured(value); err != nil {
		fs.add(SeverityError, CodeBadValue, key, "%s", strings.TrimPrefix(err.Error(), "is "))
	}
}
