package outputspec

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/validators"
)

// A Spec is one level's statement of the answer's shape. Empty fields are
// unset and leave the earlier levels' value in force.
type Spec struct {
	Format       string `toml:"format" json:"format,omitempty"`
	Instructions string `toml:"instructions" json:"instructions,omitempty"`
	Example      string `toml:"example" json:"example,omitempty"`
	// Schema is a JSON Schema given inline (decoded JSON or TOML table).
	Schema     any    `toml:"schema" json:"schema,omitempty"`
	SchemaFile string `toml:"schema_file" json:"schemaFile,omitempty"`
	// Validator is the path of a Starlark script.
	Validator          string         `toml:"validator" json:"validator,omitempty"`
	OnValidatorError   string         `toml:"on_validator_error" json:"onValidatorError,omitempty"`
	Artifacts          []ArtifactDecl `toml:"artifacts" json:"artifacts,omitempty"`
	OverwriteArtifacts *bool          `toml:"overwrite_artifacts" json:"overwriteArtifacts,omitempty"`
}

// An ArtifactDecl declares a file the answer hands back.
type ArtifactDecl struct {
	Name        string `toml:"name" json:"name"`
	Type        string `toml:"type" json:"type,omitempty"`
	Required    bool   `toml:"required" json:"required,omitempty"`
	Description string `toml:"description" json:"description,omitempty"`
}

// A Level is a Spec with where it came from.
type Level struct {
	Name string // for warnings: "blueprint", "stage review", "launch", "session", ...
	Dir  string // relative paths in Spec resolve against it
	Spec Spec
	// Blueprint levels' checks are retired when a later level changes format.
	Blueprint bool
}

// Resolve combines levels, the later one winning per field. When a level
// names a format other than the one in effect, the schema, validator and
// artifacts of the levels before it are retired; each retirement is
// returned as a warning. Relative paths come back absolute.
func Resolve(levels ...Level) (Spec, []string) {
	var out Spec
	var warnings []string
	for _, l := range levels {
		s := l.Spec
		if s.Format != "" && out.Format != "" && validators.Canonical(s.Format) != validators.Canonical(out.Format) {
			var retired []string
			if out.Schema != nil || out.SchemaFile != "" {
				retired = append(retired, "schema")
			}
			if out.Validator != "" {
				retired = append(retired, "validator "+filepath.Base(out.Validator))
			}
			if len(out.Artifacts) > 0 {
				retired = append(retired, fmt.Sprintf("%d declared artifact(s)", len(out.Artifacts)))
			}
			if len(retired) > 0 {
				warnings = append(warnings, fmt.Sprintf("%s asks for %s where %s was in effect: retired %s",
					l.Name, validators.Canonical(s.Format), validators.Canonical(out.Format), strings.Join(retired, ", ")))
			}
			out.Schema, out.SchemaFile, out.Validator, out.Artifacts = nil, "", "", nil
		}
		if s.Format != "" {
			out.Format = s.Format
		}
		if s.Instructions != "" {
			out.Instructions = s.Instructions
		}
		if s.Example != "" {
			out.Example = s.Example
		}
		if s.Schema != nil {
			out.Schema, out.SchemaFile = s.Schema, ""
		}
		if s.SchemaFile != "" {
			out.Schema, out.SchemaFile = nil, abs(l.Dir, s.SchemaFile)
		}
		if s.Validator != "" {
			out.Validator = abs(l.Dir, s.Validator)
		}
		if s.OnValidatorError != "" {
			out.OnValidatorError = s.OnValidatorError
		}
		if len(s.Artifacts) > 0 {
			out.Artifacts = s.Artifacts
		}
		if s.OverwriteArtifacts != nil {
			out.OverwriteArtifacts = s.OverwriteArtifacts
		}
	}
	if out.Format == "" {
		out.Format = "markdown"
	}
	return out, warnings
}

func abs(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
