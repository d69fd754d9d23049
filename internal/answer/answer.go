// Package answer is the small vocabulary of the final answer that packages
// far below the answer's checks need: its size cap, the tool that carries
// it, the strict subsets a provider names, and what an artifact is. It
// imports nothing, so a provider, engine/llm or the store can speak of the
// answer without linking the checks (outputspec, validators: Starlark, the
// JSON Schema library, goldmark). outputspec and engine/blueprint re-export
// these names; this is their one definition.
package answer

// MaxBytes caps an answer's size; a longer one is cut and marked truncated
// (outputspec.MaxAnswer).
const MaxBytes = 256 << 10

// SubmitTool is the engine's tool that carries the answer
// (blueprint.ToolSubmitOutput).
const SubmitTool = "submit_output"

// Strict subsets a provider names (llm.Shapes.Strict, outputspec's
// ToolShape.Strict).
const (
	StrictOpenAI    = "openai"
	StrictAnthropic = "anthropic"
)

// An Artifact is a file submitted with the answer, as the answer's check
// recorded it.
type Artifact struct {
	Name     string `json:"name"`
	Path     string `json:"path"` // relative to the working directory, slash-separated
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	// RunPath is where the run record keeps a copy of the file, as a
	// run: path ("run:artifacts/report.md"); empty when none was kept.
	// The engine sets it; a check never does.
	RunPath string `json:"runPath,omitempty"`
}
