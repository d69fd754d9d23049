package main

import (
	"strings"

	"github.com/coda-acp/coda/engine"
)

// checkAnswers refuses --output-* for an agent with no stage that can
// answer (DESIGN §15, honest capability): the flags would shape an answer
// it never gives. Such an agent does not advertise finalOutput either
// (acp/initialize.go).
func (f *launchFlags) checkAnswers(b *engine.Blueprint) error {
	var given []string
	for _, fl := range []struct{ name, value string }{
		{"--output-format", f.format}, {"--output-instructions", f.instructions}, {"--output-example", f.example},
		{"--output-schema", f.schema}, {"--output-validator", f.validator},
	} {
		if fl.value != "" {
			given = append(given, fl.name)
		}
	}
	if len(given) == 0 {
		return nil
	}
	for _, s := range b.Stages {
		if s.CanSubmit() {
			return nil
		}
	}
	name := b.Agent.Name
	if name == "" {
		name = b.Source
	}
	return usageError("agent %s gives no answer (no stage has mode = \"output\" or require_output = true), so %s has nothing to shape", name, strings.Join(given, ", "))
}
