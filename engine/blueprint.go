package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
}

// AgentConfig is the [agent] table.
type AgentConfig struct {
	Name        string           `toml:"name"`
	Description string           `toml:"description"`
	Start       string           `toml:"start"`
	Output      *outputspec.Spec `toml:"output"`
}

// Stage modes.
const (
	ModeAutonomous = "autonomous"
	ModeOutput     = "output"
)

// A Stage is one [stages.NAME] table.
type Stage struct {
	Name            string                 `toml:"-"`
	Mode            string                 `toml:"mode"`
	Model           StageModel             `toml:"model"`
	Description     string                 `toml:"description"`
	SystemPrompt    string                 `toml:"system_prompt"`
	MaxIterations   int                    `toml:"max_iterations"`
	MaxRevisits     *int                   `toml:"max_revisits"`
	AvailableTools  []string               `toml:"available_tools"`
	AllowComplete   bool                   `toml:"allow_complete"`
	RequireOutput   *bool                  `toml:"require_output"`
	Transitions     map[string]*Transition `toml:"transitions"`
	Output          *outputspec.Spec       `toml:"output"`
	TransitionOrder []string               `toml:"-"`
}

// StageModel is a stage's `model = { models = [...] }`.
type StageModel struct {
	Models           []string `toml:"models"`
	AllowUserDefault *bool    `toml:"allow_user_default"`
}

// A Transition is a way out of a stage.
type Transition struct {
	Hint string `toml:"hint"`
}

// Defaults for stage limits.
const (
	DefaultMaxIterations = 30
	DefaultMaxRevisits   = 3
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

// UserDefaultAllowed reports whether --model overrides the stage's models.
func (s *Stage) UserDefaultAllowed() bool {
	return s.Model.AllowUserDefault == nil || *s.Model.AllowUserDefault
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

// ParseBlueprint decodes a blueprint strictly: unknown keys are errors
// naming their path. source names the file for messages.
func ParseBlueprint(data []byte, source string) (*Blueprint, error) {
	var b Blueprint
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&b)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("%s: line %d: %s", source, perr.Position.Line, perr.Message)
		}
		return nil, fmt.Errorf("%s: %v", source, err)
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		if !inSchema(k) {
			unknown = append(unknown, k.String())
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", source, strings.Join(unknown, ", "))
	}
	b.Source = source
	seenStage := map[string]bool{}
	for _, k := range md.Keys() {
		// Keys come in file order: stages.NAME, stages.NAME.transitions.TO.
		if len(k) >= 2 && k[0] == "stages" && !seenStage[k[1]] {
			seenStage[k[1]] = true
			b.Order = append(b.Order, k[1])
		}
		if len(k) == 4 && k[0] == "stages" && k[2] == "transitions" {
			if s := b.Stages[k[1]]; s != nil {
				s.TransitionOrder = append(s.TransitionOrder, k[3])
			}
		}
	}
	for name, s := range b.Stages {
		if s == nil {
			return nil, fmt.Errorf("%s: stages.%s is empty", source, name)
		}
		s.Name = name
	}
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &b, nil
}

// inSchema reports whether k lies inside an inline output schema, which is
// free-form JSON Schema rather than blueprint keys.
func inSchema(k toml.Key) bool {
	for i := 0; i+1 < len(k); i++ {
		if k[i] == "output" && k[i+1] == "schema" && i+2 < len(k) {
			return true
		}
	}
	return false
}

// check finds the errors that make a blueprint unusable.
func (b *Blueprint) check() error {
	if len(b.Stages) == 0 {
		return errors.New("no stages: add a [stages.NAME] table")
	}
	if b.Agent.Start != "" && b.Stages[b.Agent.Start] == nil {
		return fmt.Errorf("agent.start names stage %q, which does not exist", b.Agent.Start)
	}
	for _, name := range b.Order {
		s := b.Stages[name]
		switch s.Mode {
		case "", ModeAutonomous, ModeOutput:
		default:
			return fmt.Errorf("stages.%s.mode: %q is neither \"autonomous\" nor \"output\"", name, s.Mode)
		}
		for _, to := range s.TransitionOrder {
			if b.Stages[to] == nil {
				return fmt.Errorf("stages.%s.transitions.%s: no stage is named %q", name, to, to)
			}
		}
		if s.Output != nil && s.Output.OnValidatorError != "" && s.Output.OnValidatorError != "reject" && s.Output.OnValidatorError != "accept" {
			return fmt.Errorf("stages.%s.output.on_validator_error: %q is neither \"reject\" nor \"accept\"", name, s.Output.OnValidatorError)
		}
	}
	return nil
}

// LoadBlueprint reads a blueprint from a file, or from a directory holding
// blueprint.toml.
func LoadBlueprint(path string) (*Blueprint, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", path, unwrapPathError(err))
	}
	if info.IsDir() {
		path = filepath.Join(path, "blueprint.toml")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", path, unwrapPathError(err))
	}
	b, err := ParseBlueprint(data, path)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(filepath.Dir(path))
	b.Dir = abs
	return b, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
