package engine

import (
	"fmt"
	"strings"

	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/store"
)

// What later stages see of earlier ones (DESIGN §6, §19): a preamble
// before the task, one section per finished visit under its stage's name:
// a line of how it ended (outcome.go), then each text the visit left
// (its last response, its answer, a yaml or toml answer's data as JSON,
// its fan-out reports) framed as data (frame.go) and clipped at
// maxInline, the clip's note outside the frame naming the run: path of
// the whole text.

// maxInline caps what a preamble inlines of an earlier stage's output, and
// what the conversation keeps of an earlier turn's prompt or answer.
const maxInline = 8 << 10

// preamble tells the stage what earlier stages produced.
func (v *stageVisit) preamble() string {
	done := v.run.done
	if len(done) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## What earlier stages produced\n")
	for _, o := range done {
		fmt.Fprintf(&b, "\n### Stage %s\n%s\n", o.stage, o.summary())
		if len(o.files) > 0 {
			fmt.Fprintf(&b, "Files written: %s\n", fileList(maskFiles(o.files, v.run.mask)))
		}
		if o.response != "" {
			writeFramed(&b, "stage "+o.stage+": last response", o.response, o.dir, store.LastResponseFile)
		}
		if o.answer != "" {
			writeFramed(&b, "stage "+o.stage+": answer", o.answer, o.dir, store.AnswerFile)
		}
		if o.data != "" && o.format != "json" {
			// A json answer is its data already.
			writeFramed(&b, "stage "+o.stage+": its "+o.format+" answer's data, as JSON", o.data, o.dir, store.AnswerFile)
		}
		for _, rep := range o.reports {
			// Not clipped: each worker's share is cut at report_bytes.
			b.WriteString(Frame("stage "+o.stage+": fan-out report", rep))
			b.WriteByte('\n')
		}
		writeArtifacts(&b, o.artifacts)
	}
	b.WriteString("\n## The task\n")
	return b.String()
}

// writeFramed writes text as data from source, clipped at maxInline: the
// note that says so follows the frame, naming where the whole text is
// (file in the record at dir, a visit's run: path).
func writeFramed(b *strings.Builder, source, text, dir, file string) {
	head := textcut.At(text, maxInline)
	b.WriteString(Frame(source, head))
	b.WriteByte('\n')
	if cut := len(text) - len(head); cut > 0 {
		where := "the rest is not kept (the run keeps no record)"
		if dir != "" {
			where = "the whole text is at " + RunPrefix + dir + "/" + file
		}
		fmt.Fprintf(b, "[… %d more bytes of it cut here; %s]\n", cut, where)
	}
}

// clip cuts s to maxInline bytes at a character boundary, saying how much
// was cut. The note fits within maxInline too, so clipping twice changes
// nothing (acp keeps a session's history clipped: KeepHistory).
func clip(s string) string {
	return textcut.Noted(s, maxInline, func(n int) string {
		return fmt.Sprintf("\n[… %d more bytes, cut here; the whole text is in the run record]", n)
	})
}
