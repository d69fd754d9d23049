package blueprint

import "github.com/coda-acp/coda/outputspec"

// Outputs are a blueprint's answer contracts per stage, resolved against the
// launch, session and prompt levels and compiled.
type Outputs struct {
	ByStage  map[string]*outputspec.Contract
	Warnings []string
}

// Lead is the contract of the blueprint's start stage, or else of its first
// stage that answers: the one a client is told about. Nil when no stage
// answers.
func (o *Outputs) Lead(b *Blueprint) *outputspec.Contract {
	if s := b.StartStage(); s != nil && o.ByStage[s.Name] != nil {
		return o.ByStage[s.Name]
	}
	for _, name := range b.Order {
		if c := o.ByStage[name]; c != nil && !b.Stages[name].AllowAsWorker {
			return c
		}
	}
	return nil
}

// CompileOutputs resolves and compiles the answer contract of every stage
// that can submit an answer. levels are the levels after the blueprint's
// (launch, session, config option, prompt; or a child run's spawn); the
// blueprint's own two are filled in here. An error names the file and
// problem; it is a start-up (or request) error.
func CompileOutputs(b *Blueprint, levels outputspec.Levels) (*Outputs, error) {
	out := &Outputs{ByStage: map[string]*outputspec.Contract{}}
	seen := map[string]bool{}
	for _, name := range b.Order {
		s := b.Stages[name]
		if !s.CanSubmit() {
			continue
		}
		levels.Agent, levels.Stage, levels.StageName = nil, nil, name
		if b.Agent.Output != nil {
			levels.Agent = &outputspec.Level{Dir: b.Dir, Spec: *b.Agent.Output}
		}
		if s.Output != nil {
			levels.Stage = &outputspec.Level{Dir: b.Dir, Spec: *s.Output}
		}
		spec, warnings := outputspec.Resolve(stageLevels(s, levels))
		if spec.OverwriteArtifacts == nil {
			spec.OverwriteArtifacts = b.OverwriteArtifacts // the config's default
		}
		for _, w := range warnings {
			if !seen[w] {
				seen[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
		c, err := outputspec.Compile(spec)
		if err != nil {
			return nil, err
		}
		for _, w := range c.Warnings() {
			if !seen[w] {
				seen[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
		out.ByStage[name] = c
	}
	return out, nil
}

// stageLevels are the levels a stage's contract resolves from: a worker
// stage answers to its blueprint alone (agent and stage), never to the
// launch, whose spec shapes the run's final answer (DESIGN §12).
func stageLevels(s *Stage, levels outputspec.Levels) outputspec.Levels {
	if !s.AllowAsWorker {
		return levels
	}
	return outputspec.Levels{Agent: levels.Agent, Stage: levels.Stage, StageName: levels.StageName}
}
