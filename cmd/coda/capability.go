package main

import (
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
)

// checkAnswers refuses --output-* for an agent with no stage that can
// answer (DESIGN §15, honest capability): the flags would shape an answer
// it never gives. Such an agent does not advertise finalOutput either
// (acp/initialize.go).
func (f *launchFlags) checkAnswers(b *blueprint.Blueprint) error {
	var given []string
	for _, fl := range []struct{ name, value string }{
		{"--output-format", f.format}, {"--output-instructions", f.instructions}, {"--output-example", f.example},
		{"--output-schema", f.schema}, {"--output-validator", f.validator}, {"--output-assert-format", f.assertFormat.String()},
	} {
		if fl.value != "" {
			given = append(given, fl.name)
		}
	}
	if len(given) == 0 {
		return nil
	}
	if err := b.CheckAnswers(); err != nil {
		return usageError("%v, so %s has nothing to shape", err, strings.Join(given, ", "))
	}
	return nil
}
