package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/outputspec"
)

// explainSchemas is `coda validate --explain`: for each stage that answers
// in JSON with a schema, what each provider family is sent (DESIGN §17):
// the schema as written where it fits a strict subset, its projection
// where it does not (printed, with the keywords it leaves out), or why it
// goes loose.
func explainSchemas(w io.Writer, source string, b *blueprint.Blueprint) {
	if b == nil {
		return
	}
	outs, err := blueprint.CompileOutputs(b, outputspec.Levels{})
	if err != nil {
		return
	}
	for _, name := range b.Order {
		c := outs.ByStage[name]
		if c == nil || !c.Typed() || c.Schema() == nil {
			continue
		}
		fmt.Fprintf(w, "%s: stages.%s.output: the answer's schema, as each provider family is sent it:\n", source, name)
		for _, fam := range []struct{ name, label string }{{outputspec.StrictOpenAI, "OpenAI"}, {outputspec.StrictAnthropic, "Anthropic"}} {
			for _, m := range []struct {
				mechanism string
				reply     bool
				why       func(string) string
			}{{"submit_output", false, c.StrictFit}, {"reply format", true, c.ReplyStrict}} {
				what := fmt.Sprintf("  %s, %s:", fam.label, m.mechanism)
				if why := m.why(fam.name); why != "" {
					fmt.Fprintf(w, "%s not strict: %s\n", what, why)
					continue
				}
				sent, dropped := c.Projection(fam.name, m.reply)
				fmt.Fprintf(w, "%s strict, as this projection: %s\n", what, sent)
				if len(dropped) > 0 {
					fmt.Fprintf(w, "    left out of what is sent, said in the descriptions, and checked by coda: %s\n", strings.Join(dropped, "; "))
				}
			}
		}
		fmt.Fprintf(w, "  Gemini (responseJsonSchema) and Ollama (format): as written, without a strict flag (these APIs have none); vLLM and llama.cpp behind an OpenAI-kind provider: OpenAI's, in their own fields; coda checks every answer\n")
	}
}
