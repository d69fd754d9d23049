package blueprint

import "strings"

// Delegation (DESIGN §12): a stage's [stages.X.fan_out] table (the engine's
// fan_out tool runs its workers) and spawn list (spawn_agent and
// wait_for_agent start and wait for other agents), and what loading
// checks of their values.

// FanOut is a [stages.X.fan_out] table.
type FanOut struct {
	Worker          string `toml:"worker"`
	MaxWorkers      int    `toml:"max_workers"`
	OnWorkerFailure string `toml:"on_worker_failure"`
	ReportBytes     int    `toml:"report_bytes"`
}

// Limits and defaults of fan_out.
const (
	DefaultMaxWorkers  = 4
	MaxWorkers         = 16 // the most max_workers may say
	DefaultReportBytes = 8 << 10
	MinReportBytes     = 256 // room for a section's cut note
	MaxReportBytes     = 256 << 10
)

// Values of on_worker_failure.
const (
	OnWorkerFailureContinue = "continue"
	OnWorkerFailureFail     = "fail"
)

// AtOnce is how many of the table's workers run at once.
func (f *FanOut) AtOnce() int {
	if f.MaxWorkers > 0 {
		return f.MaxWorkers
	}
	return DefaultMaxWorkers
}

// SectionBytes is where each worker's section of the report is cut.
func (f *FanOut) SectionBytes() int {
	if f.ReportBytes > 0 {
		return f.ReportBytes
	}
	return DefaultReportBytes
}

// Delegates reports whether the stage offers the named tool of the
// engine's for starting sub-runs: fan_out from its fan_out table,
// spawn_agent and wait_for_agent from its spawn list.
func (s *Stage) Delegates(name string) bool {
	switch name {
	case ToolFanOut:
		return s.FanOut != nil
	case ToolSpawnAgent, ToolWaitForAgent:
		return len(s.Spawn) > 0
	}
	return false
}

// A Loader loads the agent a spawn entry names: a bundled agent's name,
// or a blueprint file or directory, relative to fromDir (the spawning
// blueprint's directory; "" for a bundled agent). cmd/coda implements it,
// where the bundled agents are.
type Loader func(name, fromDir string) (*Blueprint, error)

// checkDelegation reports the values of a stage's fan_out table and spawn
// list that are not among their choices, as loading does for mode.
func checkDelegation(fs *findings, s *Stage) {
	key := "stages." + s.Name
	if f := s.FanOut; f != nil {
		if strings.TrimSpace(f.Worker) == "" {
			fs.add(SeverityError, CodeBadValue, key+".fan_out.worker", "missing: name the stage each worker runs")
		}
		if f.MaxWorkers < 0 || f.MaxWorkers > MaxWorkers {
			fs.add(SeverityError, CodeBadValue, key+".fan_out.max_workers", "%d: give 1 to %d workers at once, or leave it out for %d", f.MaxWorkers, MaxWorkers, DefaultMaxWorkers)
		}
		switch f.OnWorkerFailure {
		case "", OnWorkerFailureContinue, OnWorkerFailureFail:
		default:
			fs.add(SeverityError, CodeBadValue, key+".fan_out.on_worker_failure", "%q is neither %q nor %q", f.OnWorkerFailure, OnWorkerFailureContinue, OnWorkerFailureFail)
		}
		if f.ReportBytes != 0 && (f.ReportBytes < MinReportBytes || f.ReportBytes > MaxReportBytes) {
			fs.add(SeverityError, CodeBadValue, key+".fan_out.report_bytes", "%d: give %d to %d bytes per worker, or leave it out for %d", f.ReportBytes, MinReportBytes, MaxReportBytes, DefaultReportBytes)
		}
	}
	seen := map[string]bool{}
	for _, name := range s.Spawn {
		switch {
		case strings.TrimSpace(name) == "":
			fs.add(SeverityError, CodeBadValue, key+".spawn", "an empty entry: name a bundled agent or a blueprint path")
		case seen[name]:
			fs.add(SeverityError, CodeBadValue, key+".spawn", "%q is listed twice", name)
		}
		seen[name] = true
	}
}
