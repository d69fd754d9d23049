package blueprint

import "fmt"

// Finding severities. `coda validate` exits 1 when any finding is an
// error; an info line says something worth knowing that is not wrong.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Finding codes of loading, stable so scripts and tests can match them;
// engine/lint adds those of its checks.
const (
	// What Parse refuses, one finding per problem.
	CodeTOML         = "toml"          // the file is not TOML, or a value has the wrong type
	CodeUnknownKey   = "unknown-key"   // a key no blueprint table has
	CodeMissingStage = "missing-stage" // agent.start or a transition names no stage
	CodeBadValue     = "bad-value"     // a mode, on_validator_error, structured or effort that is not one of its choices
	CodeNoStages     = "no-stages"     // the blueprint has no [stages.NAME]
	CodeLoad         = "load"          // any other reason the blueprint does not load
)

// A Finding is something `coda validate` reports about a blueprint.
type Finding struct {
	Severity string
	Code     string
	// Key is the blueprint key the finding is about, such as
	// "stages.review" or "stages.review.transitions.report"; "" for the
	// whole blueprint.
	Key     string
	Message string
}

func (f Finding) String() string {
	where := ""
	if f.Key != "" {
		where = " " + f.Key + ":"
	}
	return fmt.Sprintf("%s[%s]%s %s", f.Severity, f.Code, where, f.Message)
}

// findings collects findings in the order they are found.
type findings []Finding

func (fs *findings) add(sev, code, key, format string, args ...any) {
	*fs = append(*fs, Finding{Severity: sev, Code: code, Key: key, Message: fmt.Sprintf(format, args...)})
}
