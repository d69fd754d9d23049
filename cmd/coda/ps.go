package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// `coda ps` and `coda cancel` (DESIGN §21): the runs in flight and those
// that ended lately, read off their records; a run whose process is gone
// without finishing its record is shown dead, never running.

// statusDead is how `coda ps` shows a run whose record says running but
// whose process is gone (killed, or the machine went down).
const statusDead = "dead"

// psRow is one run as `coda ps` lists it.
type psRow struct {
	RunID   string `json:"runId"`
	Agent   string `json:"agent"`
	Stage   string `json:"stage"`
	Status  string `json:"status"`
	Started string `json:"started"`
	Ended   string `json:"ended,omitempty"`
	// Elapsed is how long it ran, or has run so far, in seconds.
	Elapsed  float64 `json:"elapsed"`
	Model    string  `json:"model"`
	PID      int     `json:"pid"`
	Detached bool    `json:"detached"`
	Resumes  int     `json:"resumes,omitempty"`
}

// How far back `coda ps` looks: the newest psScan records, of which those
// ended in the last psRecent (psEnded at most) are listed beside the runs
// in flight.
const (
	psScan   = 500
	psRecent = 24 * time.Hour
	psEnded  = 20
)

// ps is `coda ps [--json] [--state-dir DIR]`.
func ps(args []string, stdout io.Writer) error {
	var stateDir string
	var asJSON bool
	flags := newFlagSet("ps")
	flags.StringVar(&stateDir, "state-dir", "", "where run records are (default $XDG_STATE_HOME/coda)")
	flags.BoolVar(&asJSON, "json", false, "print the runs as a JSON array")
	rest, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("ps takes no arguments: coda ps [--json]")
	}
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	rows, err := listPS(store.New(stateDir), time.Now())
	if err != nil {
		return err
	}
	if asJSON {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tAGENT\tSTAGE\tSTATUS\tSTARTED\tELAPSED\tMODEL\tPID")
	for _, r := range rows {
		started := r.Started
		if t, err := time.Parse(time.RFC3339Nano, r.Started); err == nil {
			started = t.Local().Format("01-02 15:04:05")
		}
		pid := "-"
		if r.PID > 0 {
			pid = fmt.Sprint(r.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Agent, dash(r.Stage), r.Status, started,
			(time.Duration(r.Elapsed) * time.Second).String(), dash(r.Model), pid)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listPS reads the runs `coda ps` lists, newest first: every run in
// flight (running, or dead) among the newest psScan, and those that ended
// since now-psRecent.
func listPS(st *store.Store, now time.Time) ([]psRow, error) {
	ids, err := st.RunIDs()
	if err != nil {
		return nil, err
	}
	rows := []psRow{}
	ended := 0
	for _, id := range ids[:min(len(ids), psScan)] {
		rr, err := st.ReadRun(id)
		if err != nil {
			continue
		}
		row := psRowOf(rr, now)
		if rr.Status != "running" {
			t, err := time.Parse(time.RFC3339Nano, rr.Ended)
			if err != nil || now.Sub(t) > psRecent || ended >= psEnded {
				continue
			}
			ended++
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b psRow) int { return -compareTimes(a.Started, b.Started) })
	return rows, nil
}

func compareTimes(a, b string) int {
	ta, _ := time.Parse(time.RFC3339Nano, a)
	tb, _ := time.Parse(time.RFC3339Nano, b)
	return ta.Compare(tb)
}

// psRowOf is rr as `coda ps` shows it at now.
func psRowOf(rr *store.RunRecord, now time.Time) psRow {
	row := psRow{RunID: rr.RunID, Agent: rr.Agent, Stage: rr.Stage, Status: runStatus(rr), Started: rr.Started, Ended: rr.Ended, Model: rr.Model, Resumes: len(rr.Resumes)}
	if p := rr.Process; p != nil {
		row.PID, row.Detached = p.PID, p.Detached
	}
	start, err := time.Parse(time.RFC3339Nano, rr.Started)
	if err == nil {
		end := now
		if t, err := time.Parse(time.RFC3339Nano, rr.Ended); err == nil {
			end = t
		}
		row.Elapsed = end.Sub(start).Round(time.Second).Seconds()
	}
	return row
}

// runStatus is the run's status as its record says it, but dead for a
// run said to be running whose process is gone (or unknown: a record of
// a release that named none).
func runStatus(rr *store.RunRecord) string {
	if rr.Status == "running" && (rr.Process == nil || !rr.Process.Alive()) {
		return statusDead
	}
	return rr.Status
}

// cancel is `coda cancel RUN`: a detached run's process is asked to stop
// (SIGTERM: it cancels its run and finishes its record, `cancelled`), and
// cancel waits until its record says it ended.
func cancel(ctx context.Context, args []string, stdout io.Writer) error {
	var stateDir string
	flags := newFlagSet("cancel")
	flags.StringVar(&stateDir, "state-dir", "", "where run records are (default $XDG_STATE_HOME/coda)")
	rest, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("cancel takes one RUN-ID: coda cancel RUN-ID")
	}
	id := rest[0]
	if err := store.CheckRunID(id); err != nil {
		return usageError("%v", err)
	}
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	st := store.New(stateDir)
	rr, err := st.ReadRun(id)
	if err != nil {
		return err
	}
	switch status := runStatus(rr); {
	case status == statusDead:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s is dead: its process is gone; `coda resume %s` goes on with it", id, id)}
	case status != "running":
		_, err := fmt.Fprintf(stdout, "run %s had ended: %s\n", id, status)
		return err
	case !rr.Process.Detached:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s is not detached: it runs in process %d (an editor's coda, or `coda run` in a terminal), where it is cancelled", id, rr.Process.PID)}
	}
	if err := stopRun(rr.Process.PID); err != nil {
		return fmt.Errorf("run %s: stopping process %d: %w", id, rr.Process.PID, err)
	}
	rr, err = st.WaitRun(ctx, id, runOver)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "run %s: %s\n", id, runStatus(rr))
	return err
}

// runOver says whether a run is over: its record says it ended, or its
// process is gone.
func runOver(rr *store.RunRecord) bool {
	return rr.Status != "running" || runStatus(rr) == statusDead
}

// waitEnd ends `coda result RUN --wait` as `coda run` would have ended:
// 1 failed, cancelled or dead; then as `coda result` does.
func waitEnd(rr *store.RunRecord) error {
	id := rr.RunID
	switch {
	case runStatus(rr) == statusDead:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s died: its process is gone; `coda resume %s` goes on with it", id, id)}
	case rr.FinalOutput != nil:
		return nil
	case rr.Status == engine.StatusFailed:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s failed: %s", id, rr.Error)}
	case rr.Status == engine.StatusCancelled:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s was cancelled", id)}
	}
	return nil
}
