package validators

import (
	"errors"
	"fmt"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// gfmParser is goldmark with the GFM extension, as the Markdown check was
// made before it found tables itself (gfmTable): the reference it is held to.
var gfmParser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// tableAnswers are answers where a GFM table decides whether a sentence
// or remark stands around a fence.
var tableAnswers = []string{
	"Here is the markdown:\n```markdown\n# T\n```\n",
	"Here is the markdown: | a\n--- | ---\n```markdown\n# T\n```\n",
	"Here is the markdown:\n| a | b |\n|---|:-:|\n```markdown\n# T\n```\n",
	"Here is the markdown:\n| a | b | c |\n|---|---|\n```markdown\n# T\n```\n",
	"Here is the markdown:\n| a \\| b |\n|---|\n```md\n# T\n```\n",
	"Here is the markdown:\n    |---|\n```md\n# T\n```\n",
	"Here is the markdown:\n|\n|---|\n```md\n# T\n```\n",
	"```\nx\n```\nLet me know | if\n:--|--:\n",
	"```\nx\n```\nLet me know if this helps.\n",
	"```\nx\n```\nLet me know |\n - | - \n",
}

// checkMarkdown, on goldmark's CommonMark parser and gfmTable, says what it
// said on goldmark's GFM parser, word for word.
func TestMarkdown_gfmTables(t *testing.T) {
	for _, doc := range tableAnswers {
		if got, want := errString(checkMarkdown(doc)), errString(checkMarkdownWith(gfmParser, doc)); got != want {
			t.Errorf("checkMarkdown(%q) = %s, want (GFM) %s", doc, got, want)
		}
	}
}

func FuzzMarkdown_gfm(f *testing.F) {
	addSeeds(f)
	for _, doc := range tableAnswers {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if got, want := errString(checkMarkdown(doc)), errString(checkMarkdownWith(gfmParser, doc)); got != want {
			t.Fatalf("checkMarkdown(%q) = %s, want (GFM) %s", doc, got, want)
		}
	})
}

func errString(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%d:%d %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprint(err)
}
