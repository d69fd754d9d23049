package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/store"
)

// result is `coda result [RUN-ID] [--raw|--json|--artifacts DIR]`: a
// recorded run's answer, or without a run id the latest runs.
func result(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var raw, asJSON, force, wait bool
	var stateDir, artifacts string
	fs := newFlagSet("result")
	fs.BoolVar(&raw, "raw", false, "print the answer's bytes alone")
	fs.BoolVar(&asJSON, "json", false, "print the answer record as JSON (also for a run without an answer)")
	fs.StringVar(&stateDir, "state-dir", "", "where run records are (default $XDG_STATE_HOME/coda)")
	var worker, child string
	fs.StringVar(&worker, "worker", "", "print the answer of one of the run's fan_out workers (w1, w2, …)")
	fs.StringVar(&child, "child", "", "print the answer of one of the agents the run spawned (c1, …); with --worker, of that agent's worker")
	fs.StringVar(&artifacts, "artifacts", "", "copy the run's kept artifacts into this directory, at their workspace paths")
	fs.BoolVar(&force, "force", false, "with --artifacts, replace files already there")
	fs.BoolVar(&wait, "wait", false, "wait until the run ends (a detached one), then print its answer; exit as coda run would have")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageError("result takes one RUN-ID: coda result [RUN-ID] [--raw|--json|--artifacts DIR]")
	}
	if (raw && asJSON) || (artifacts != "" && (raw || asJSON)) {
		return usageError("--raw, --json and --artifacts: choose one")
	}
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	if len(rest) == 0 {
		if raw || asJSON || artifacts != "" || force || worker != "" || child != "" || wait {
			return usageError("--raw, --json, --artifacts, --worker, --child and --wait need a RUN-ID: coda result RUN-ID ... (coda result alone lists the runs)")
		}
		return listRuns(stdout, store.New(stateDir))
	}
	if err := store.CheckRunID(rest[0]); err != nil {
		return usageError("%v", err)
	}
	st := store.New(stateDir)
	if wait {
		// Watching the record, not spinning (store.WaitRun); then `coda
		// run`'s exit status for a run that failed, was cancelled or died.
		rr, err := st.WaitRun(ctx, rest[0], runOver)
		if err != nil {
			return err
		}
		if err := waitEnd(rr); err != nil {
			if asJSON && worker == "" && child == "" {
				printAnswer(stdout, withUsage(rr.Record(), rr.Usage), false, true, false)
			}
			return err
		}
	}
	rr, err := readResult(st, rest[0], child, worker)
	if err != nil {
		return err
	}
	if artifacts != "" {
		return handBack(stdout, st, rr, artifacts, force)
	}
	if rr.FinalOutput == nil {
		if asJSON {
			if err := printAnswer(stdout, withUsage(rr.Record(), rr.Usage), false, true, false); err != nil {
				return err
			}
		}
		if rr.Status == engine.StatusUnavailable {
			return &exitError{code: 4, msg: fmt.Sprintf("run %s has no answer: the model declared it unavailable: %s", rr.RunID, rr.Unavailable)}
		}
		why := rr.Status
		if rr.NoAnswer != "" {
			why += ": " + rr.NoAnswer
		}
		return &exitError{code: 3, msg: fmt.Sprintf("run %s has no answer (%s)", rr.RunID, why)}
	}
	return printAnswer(stdout, withUsage(rr.FinalOutput, rr.Usage), raw, asJSON, true)
}

// readResult reads the record of a run, or of one of its children or
// workers (DESIGN §12).
func readResult(st *store.Store, runID, child, worker string) (*store.RunRecord, error) {
	for _, name := range []string{child, worker} {
		if name != "" && store.CheckRunID(name) != nil {
			return nil, usageError("%q is not a worker or child name, such as w1 or c1", name)
		}
	}
	var path []string
	if child != "" {
		path = append(path, "children", child)
	}
	if worker != "" {
		path = append(path, "workers", worker)
	}
	if len(path) == 0 {
		return st.ReadRun(runID)
	}
	return st.ReadSubRun(runID, strings.Join(path, "/"))
}

// runsListed is how many runs `coda result` lists.
const runsListed = 20

// listRuns lists the latest runs, newest first (run ids sort by time):
// each one's id, status and the first line of its prompt.
func listRuns(w io.Writer, st *store.Store) error {
	dir := filepath.Join(st.Dir(), "runs")
	ids, err := st.RunIDs()
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		_, err = fmt.Fprintf(w, "no runs in %s\n", dir)
		return err
	}
	more := max(0, len(ids)-runsListed)
	ids = ids[:len(ids)-more]
	for _, id := range ids {
		status, prompt := "unreadable", ""
		if rr, err := st.ReadRun(id); err == nil {
			status, prompt = runStatus(rr), firstLine(strings.TrimSpace(rr.Prompt))
		}
		if cut := textcut.At(prompt, 72); len(cut) < len(prompt) {
			prompt = cut + "…"
		}
		fmt.Fprintf(w, "%-24s %-20s %s\n", id, status, prompt)
	}
	if more > 0 {
		fmt.Fprintf(w, "… and %d older (in %s)\n", more, dir)
	}
	return nil
}

// handBack copies the artifacts the run's record kept into dir, each at
// its workspace path, and prints each file written. Nothing is replaced
// without force; nothing outside dir is written, and nothing outside the
// run's record is read (both through os.Root).
func handBack(w io.Writer, st *store.Store, rr *store.RunRecord, dir string, force bool) error {
	if rr.FinalOutput == nil || len(rr.FinalOutput.Artifacts) == 0 {
		return &exitError{code: 3, msg: fmt.Sprintf("run %s has no artifacts", rr.RunID)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer out.Close()
	rec, err := st.OpenRun(rr.RunID)
	if err != nil {
		return err
	}
	defer rec.Close()
	type copyJob struct{ src, dst string }
	var jobs []copyJob
	var problems []string
	for _, a := range rr.FinalOutput.Artifacts {
		src, kept := strings.CutPrefix(a.RunPath, engine.RunPrefix)
		dst := filepath.FromSlash(a.Path)
		switch {
		case !kept:
			problems = append(problems, fmt.Sprintf("%s was not kept in the run record", a.Path))
		case !filepath.IsLocal(dst):
			problems = append(problems, fmt.Sprintf("%s is not a path under %s", a.Path, dir))
		default:
			if _, err := out.Lstat(dst); err == nil && !force {
				problems = append(problems, fmt.Sprintf("%s is already there (--force replaces it)", filepath.Join(dir, dst)))
			}
			jobs = append(jobs, copyJob{filepath.FromSlash(src), dst})
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("run %s: nothing copied: %s", rr.RunID, strings.Join(problems, "; "))
	}
	for _, j := range jobs {
		if err := copyIn(rec, j.src, out, j.dst); err != nil {
			return fmt.Errorf("run %s: %s: %w", rr.RunID, j.dst, err)
		}
		fmt.Fprintln(w, filepath.Join(dir, j.dst))
	}
	return nil
}

// copyIn copies src under from to dst under to, making its directory.
func copyIn(from *os.Root, src string, to *os.Root, dst string) error {
	in, err := from.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := to.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := to.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
