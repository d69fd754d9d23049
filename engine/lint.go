package engine

import (
	"fmt"
)

// Finding severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// A Finding is something `coda validate` reports about a blueprint.
type Finding struct {
	Severity string
	Code     string // e.g. "unreachable-stage"
	Stage    string
	Message  string
}

func (f Finding) String() string {
	where := ""
	if f.Stage != "" {
		where = " stages." + f.Stage + ":"
	}
	return fmt.Sprintf("%s[%s]%s %s", f.Severity, f.Code, where, f.Message)
}

// Lint checks a loaded blueprint for problems that loading does not catch:
// its outputs' schemas and validators compile, every stage is reachable,
// and the run cannot end without the answer it owes.
func Lint(b *Blueprint) []Finding {
	var out []Finding
	add := func(sev, code, stage, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Code: code, Stage: stage, Message: fmt.Sprintf(format, args...)})
	}
	if _, err := CompileOutputs(b); err != nil {
		add(SeverityError, "output-spec", "", "%v", err)
	}
	reached := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		if reached[name] || b.Stages[name] == nil {
			return
		}
		reached[name] = true
		for _, to := range b.Stages[name].TransitionOrder {
			walk(to)
		}
	}
	if start := b.StartStage(); start != nil {
		walk(start.Name)
	}
	endsWithOutput := false
	for _, name := range b.Order {
		s := b.Stages[name]
		if !reached[name] {
			add(SeverityWarning, "unreachable-stage", name, "no transition reaches this stage from the start stage")
		}
		if len(s.TransitionOrder) == 0 && s.CanSubmit() {
			endsWithOutput = true
		}
		if s.AllowComplete && !s.CanSubmit() && needsOutputAfter(b, name) {
			add(SeverityError, "allow-complete-skips-output", name, "allow_complete lets the run end here, before any stage that owes the answer")
		}
	}
	if !endsWithOutput {
		add(SeverityWarning, "no-output-stage", "", "no stage that can end the run submits an answer: runs will finish without one")
	}
	return out
}

// needsOutputAfter reports whether a stage that owes the answer can still
// come after stage name (so ending at name skips it).
func needsOutputAfter(b *Blueprint, name string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		if seen[n] {
			return false
		}
		seen[n] = true
		s := b.Stages[n]
		if s == nil {
			return false
		}
		if n != name && s.OwesOutput() {
			return true
		}
		for _, to := range s.TransitionOrder {
			if walk(to) {
				return true
			}
		}
		return false
	}
	return walk(name)
}
