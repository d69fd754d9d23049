package outputspec

import (
	"fmt"
	"mime"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/validators"
)

// DefaultFormat is the format when no level names one. Markdown is what a
// person in an editor reads best, and its check is the most forgiving.
const DefaultFormat = "markdown"

// Values of on_validator_error.
const (
	OnValidatorErrorReject = "reject" // the default: a broken validator's error goes back to the model
	OnValidatorErrorAccept = "accept" // record the answer unchecked, flag validator_error
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
	// Capture are globs of files under the working directory kept as
	// artifacts once an answer is accepted (capture.go).
	Capture []string `toml:"capture" json:"capture,omitempty"`
	// Structured is how the answer call asks the provider for the
	// answer's shape (DESIGN §17): StructuredAuto (""), StructuredTool,
	// StructuredNative or StructuredPrompted (shape.go).
	Structured string `toml:"structured" json:"structured,omitempty"`
	// AssertFormat false makes a schema's "format" an annotation; unset or
	// true, the formats the providers' strict modes know are checked
	// (validators' assertedFormats, DESIGN §20). It goes with the schema: a
	// format change retires it.
	AssertFormat *bool `toml:"assert_format" json:"assertFormat,omitempty"`
}

// SchemaOptions are how the spec asks for its schema to be compiled.
func (s Spec) SchemaOptions() validators.SchemaOptions {
	return validators.SchemaOptions{NoFormatAssertion: s.AssertFormat != nil && !*s.AssertFormat}
}

// An ArtifactDecl declares a file the answer hands back.
type ArtifactDecl struct {
	Name string `toml:"name" json:"name"`
	// Type is a MIME type the file must have; "video/*" and "*/*" match
	// any subtype.
	Type        string `toml:"type" json:"type,omitempty"`
	Required    bool   `toml:"required" json:"required,omitempty"`
	Description string `toml:"description" json:"description,omitempty"`
}

// Validate reports the first thing wrong with a single level's spec, in
// one line, or nil. It does not touch files: Compile does.
func (s Spec) Validate() error {
	if s.Schema != nil && s.SchemaFile != "" {
		return fmt.Errorf("output spec: schema and schema_file are both given; give one")
	}
	if s.Schema != nil {
		if _, ok := s.Schema.(map[string]any); !ok {
			return fmt.Errorf("output spec: schema must be an object (a JSON Schema), not %s", kindOf(s.Schema))
		}
	}
	switch s.OnValidatorError {
	case "", OnValidatorErrorReject, OnValidatorErrorAccept:
	default:
		return fmt.Errorf("output spec: on_validator_error is %q; it must be %q or %q",
			s.OnValidatorError, OnValidatorErrorReject, OnValidatorErrorAccept)
	}
	if err := checkCapture(s.Capture); err != nil {
		return err
	}
	if err := CheckStructured(s.Structured); err != nil {
		return fmt.Errorf("output spec: structured %v", err)
	}
	seen := map[string]bool{}
	for i, a := range s.Artifacts {
		if strings.TrimSpace(a.Name) == "" {
			return fmt.Errorf("output spec: artifacts[%d] has no name", i)
		}
		if seen[a.Name] {
			return fmt.Errorf("output spec: artifact %q is declared twice", a.Name)
		}
		seen[a.Name] = true
		if a.Type != "" && !validPattern(a.Type) {
			return fmt.Errorf("output spec: artifact %q has type %q, which is not a MIME type (like text/markdown or video/*)", a.Name, a.Type)
		}
	}
	return nil
}

// validPattern reports whether t is a MIME type or a type/* wildcard.
func validPattern(t string) bool {
	mt, _, err := mime.ParseMediaType(t)
	if err != nil {
		return false
	}
	major, minor, ok := strings.Cut(mt, "/")
	return ok && major != "" && minor != "" && (major != "*" || minor == "*")
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// A Level is one level's spec, with the directory its relative
// schema_file and validator paths resolve against.
type Level struct {
	Dir  string
	Spec Spec
}

// Levels are the levels of the cascade that a run has, each nil (or "")
// when absent. The blueprint's come from the engine, the editor's from
// acp, a child run's from spawn_agent; Resolve knows their order.
type Levels struct {
	Agent     *Level // the blueprint's [agent.output]
	Stage     *Level // the stage's [stages.StageName.output]
	StageName string
	// Spawn is a child run's launch level: spawn_agent's output_*
	// arguments (DESIGN.md §12).
	Spawn        *Level
	Launch       *Level // the --output-* flags
	SessionMeta  *Level // session/new _meta.coda.output
	ConfigOption string // the session's output_format option: a format label
	PromptMeta   *Level // session/prompt _meta.coda.output
}

// A named level is a Level as Resolve reads it: the name warnings give it.
type namedLevel struct {
	name string
	Level
}

// ordered lists the levels present, earliest first: the table of DESIGN.md
// §3, one row per line, and the names retirement warnings give each.
func (l Levels) ordered() []namedLevel {
	var config *Level
	if l.ConfigOption != "" {
		config = &Level{Spec: Spec{Format: l.ConfigOption}}
	}
	var out []namedLevel
	for _, n := range []struct {
		name  string
		level *Level
	}{
		{"the blueprint's [agent.output]", l.Agent},
		{"[stages." + l.StageName + ".output]", l.Stage},
		{"spawn_agent's output_* arguments", l.Spawn},
		{"the launch (--output-* flags)", l.Launch},
		{"session/new _meta.coda.output", l.SessionMeta},
		{"the session's output_format option", config},
		{"session/prompt _meta.coda.output", l.PromptMeta},
	} {
		if n.level != nil {
			out = append(out, namedLevel{n.name, *n.level})
		}
	}
	return out
}

// Resolve combines the levels in DESIGN.md §3's order, the later one
// winning per field. Declared artifacts and capture globs cascade whole:
// the nearest non-empty list wins.
//
// Retirement: when a level names a format whose canonical label differs
// from the one named by the levels before it, the example, schema,
// validator and declared artifacts of those earlier levels are retired
// together (an example or a check written for one shape says nothing about
// another), and a warning says what was retired, from which level, and by
// which level. Restating the same format (any alias or case) retires
// nothing. When no earlier level named a format, the first one that does
// adopts whatever example and checks came before it: they were written for
// no other format.
//
// Relative schema_file and validator paths come back joined to their
// level's Dir. When no level names a format the result is DefaultFormat.
func Resolve(levels Levels) (Spec, []string) {
	var out Spec
	var warnings []string
	// where each retirable field came from, for warnings
	var exampleFrom, schemaFrom, validatorFrom, artifactsFrom string
	for _, l := range levels.ordered() {
		s := l.Spec
		if s.Format != "" && out.Format != "" && validators.Canonical(s.Format) != validators.Canonical(out.Format) {
			var retired []string
			if out.Example != "" {
				retired = append(retired, fmt.Sprintf("example (from %s)", exampleFrom))
			}
			if out.Schema != nil || out.SchemaFile != "" {
				what := "schema"
				if out.SchemaFile != "" {
					what += " " + filepath.Base(out.SchemaFile)
				}
				retired = append(retired, fmt.Sprintf("%s (from %s)", what, schemaFrom))
			}
			if out.Validator != "" {
				retired = append(retired, fmt.Sprintf("validator %s (from %s)", filepath.Base(out.Validator), validatorFrom))
			}
			if len(out.Artifacts) > 0 {
				names := make([]string, len(out.Artifacts))
				for i, a := range out.Artifacts {
					names[i] = a.Name
				}
				retired = append(retired, fmt.Sprintf("declared artifacts %s (from %s)", strings.Join(names, ", "), artifactsFrom))
			}
			if len(retired) > 0 {
				warnings = append(warnings, fmt.Sprintf("%s asks for %s where %s was in effect: retired %s",
					l.name, validators.Canonical(s.Format), validators.Canonical(out.Format), strings.Join(retired, "; ")))
			}
			out.Example, out.Schema, out.SchemaFile, out.Validator, out.Artifacts = "", nil, "", "", nil
			out.OnValidatorError = ""
			out.AssertFormat = nil
		}
		if s.Format != "" {
			out.Format = strings.TrimSpace(s.Format)
		}
		if s.Instructions != "" {
			out.Instructions = s.Instructions
		}
		if s.Example != "" {
			out.Example, exampleFrom = s.Example, l.name
		}
		if s.Schema != nil {
			out.Schema, out.SchemaFile, schemaFrom = s.Schema, "", l.name
		}
		if s.SchemaFile != "" {
			out.Schema, out.SchemaFile, schemaFrom = nil, join(l.Dir, s.SchemaFile), l.name
		}
		if s.Validator != "" {
			out.Validator, validatorFrom = join(l.Dir, s.Validator), l.name
		}
		if s.OnValidatorError != "" {
			out.OnValidatorError = s.OnValidatorError
		}
		if len(s.Artifacts) > 0 {
			out.Artifacts, artifactsFrom = s.Artifacts, l.name
		}
		if len(s.Capture) > 0 {
			// The nearest list wins, as declared artifacts do; a format
			// change retires none: the files are the run's, whatever shape
			// its answer takes.
			out.Capture = s.Capture
		}
		if s.OverwriteArtifacts != nil {
			out.OverwriteArtifacts = s.OverwriteArtifacts
		}
		if s.AssertFormat != nil {
			out.AssertFormat = s.AssertFormat
		}
		if s.Structured != "" {
			// How the answer is asked for, not what it is: a format
			// change retires nothing of it.
			out.Structured = s.Structured
		}
	}
	if out.Format == "" {
		out.Format = DefaultFormat
	}
	return out, warnings
}

func join(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
