package store

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A Run is one run's record as it is written (DESIGN §9): run.json, and a
// directory per stage visit, stages/NNN-STAGE@VISIT/ (prompt.md,
// response.md, status.json, the texts later stages read whole, and the
// taint gate's taint_audit.json). Every file is written whole, through a
// temporary file in STATE/tmp renamed into place: a reader never sees half
// of one, a crash leaves nothing Clean does not remove, and what a run
// wrote so far survives its failure or cancellation. The files are written
// in the background by one writer the run shares with its workers and
// children (Sub): neither a turn's updates nor its answer wait for the
// disk.
//
// What is queued is written when the turn waits on something other than
// its model (WriteQueued: a tool call; a new stage visit), when a tool
// reads the record (Flush), when a worker or child ends, and after the
// answer (Flush): never beside the answer's own write, the session's
// synced append, whose sync would otherwise carry the record's files too
// (on ext4 a sync commits the whole journal: 3–4 ms with a record written
// beside it against 0.4 without). A short turn's record is written whole
// after its answer; a long one's along the way.
//
// A record that cannot be written (a state directory that is read-only,
// full, or not a directory) does not stop the run: the first failure is
// kept, and Warning says so once.
type Run struct {
	store   *Store // nil keeps nothing
	head    RunRecord
	started time.Time
	seq     int  // the stage visits so far
	begun   bool // run.json written as running
	top     bool // a turn's own run, not a worker or child
	stage   string
	process *Process // a turn's own run's process; nil for a worker's or child's
	log     *slog.Logger
	w       *writer

	mu  sync.Mutex
	err error // the first write that failed

	dirOnce sync.Once
	dir     string
}

// The files of a visit's record that hold its texts whole, which later
// stages read as run:stages/NNN-STAGE@VISIT/FILE.
const (
	AnswerFile       = "answer"
	LastResponseFile = "last_response"
)

// ArtifactsDir is where a run's record keeps artifact copies, which later
// stages read as run:artifacts/NAME.
const ArtifactsDir = "artifacts"

// NewRun begins the record of a run. head gives what run.json says of the
// run from start to end: RunID, Agent, Session and Prompt. A nil Store, or
// a head without a RunID, keeps nothing: every write is dropped.
func (s *Store) NewRun(head RunRecord, log *slog.Logger) *Run {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := Self()
	if s != nil {
		p.Detached = s.Detached
	}
	return &Run{store: s, head: head, started: time.Now().UTC(), top: true, log: log, w: &writer{}, process: &p}
}

// Resumed makes r the record of a run taken up again (DESIGN §21): it
// started at started, recorded seq stage visits before, and was resumed
// before as resumes say; r's own resume, from stage on, is added to them.
// Call it before anything is written.
func (r *Run) Resumed(started time.Time, seq int, resumes []Resume, stage string) {
	r.started, r.seq = started, seq
	r.head.Resumes = append(append([]Resume(nil), resumes...), Resume{At: time.Now().UTC().Format(time.RFC3339Nano), Stage: stage, Process: *r.process})
}

// Enter notes the stage the run enters, which run.json says while it runs
// (`coda ps`): written now when run.json was written as running already.
func (r *Run) Enter(stage string) {
	r.stage = stage
	if r.begun {
		r.writeRun(&RunRecord{Status: "running"})
	}
}

// Checkpoint queues checkpoint.json, x encoded now: what the run left
// after its last finished stage visit, for `coda resume`. It is written
// after that visit's files, in order.
func (r *Run) Checkpoint(x any) {
	if r.Dir() != "" {
		r.writeJSON(filepath.Join(r.Dir(), CheckpointFile), x)
	}
}

// CheckpointFile is the file in a run's record that Checkpoint writes.
const CheckpointFile = "checkpoint.json"

// Sub begins the record of a worker or child of r's run, nested in r's
// (head.RunID says where: RUN/workers/w1, RUN/children/c1), written by
// r's writer after what r queued; none when r keeps none.
func (r *Run) Sub(head RunRecord, log *slog.Logger) *Run {
	if log == nil {
		log = r.log
	}
	s := r.store
	if r.Dir() == "" {
		s = nil
	}
	return &Run{store: s, head: head, started: time.Now().UTC(), log: log, w: r.w}
}

// Dir is where the run's record is kept, "" when none is. It is made on
// first use, after the turn's first update: a prompt that comes after a
// pause runs that path on cold caches, where joining and cleaning a path
// cost a few µs (engine's BenchmarkRun_firstUpdate, after-idle).
func (r *Run) Dir() string {
	r.dirOnce.Do(func() {
		if r.head.RunID != "" {
			r.dir = r.store.RunDir(r.head.RunID)
		}
	})
	return r.dir
}

// Start queues run.json as running, once. A later run.json supersedes it
// while it is still queued: a short turn writes run.json once.
func (r *Run) Start() {
	if r.begun {
		return
	}
	r.begun = true
	r.writeRun(&RunRecord{Status: "running"})
}

// Finish writes run.json as rr says the run ended, with the head's fields
// and the times. It does not wait for the record to be written, unless
// more than maxBehind turns' records are still being written: then it
// waits for its own, so that a disk slower than the turns holds the turns
// back rather than piling their records up in memory.
func (r *Run) Finish(rr *RunRecord) {
	rr.Ended = time.Now().UTC().Format(time.RFC3339Nano)
	r.writeRun(rr)
	if !r.top || r.Dir() == "" {
		return
	}
	s := r.store
	if s.behind.Add(1) > maxBehind {
		r.Flush()
		s.behind.Add(-1)
		return
	}
	r.w.do("", func() { s.behind.Add(-1) })
}

// Amend writes run.json again as rr, which Finish wrote: something learnt
// after the run ended (its client gone while its answer was sent).
func (r *Run) Amend(rr *RunRecord) { r.writeRun(rr) }

// maxBehind is how many turns' records may be still being written after
// their runs ended (Finish).
const maxBehind = 64

func (r *Run) writeRun(rr *RunRecord) {
	if r.Dir() == "" {
		return
	}
	rr.RunID, rr.Session, rr.Prompt, rr.Agent = r.head.RunID, r.head.Session, r.head.Prompt, r.head.Agent
	rr.Model, rr.Process, rr.Resumes = r.head.Model, r.process, r.head.Resumes
	if rr.Stage == "" {
		rr.Stage = r.stage
	}
	rr.Started = r.started.Format(time.RFC3339Nano)
	rr.Flags, rr.Warnings, rr.Files = nonNil(rr.Flags), nonNil(rr.Warnings), nonNil(rr.Files)
	r.writeJSON(filepath.Join(r.Dir(), "run.json"), rr)
}

// KeepAnswer writes the whole answer of sub, a worker or child of r's run,
// into sub's record (AnswerFile), as r's: a failure is r's to warn of.
func (r *Run) KeepAnswer(sub *Run, content string) {
	if sub.Dir() == "" {
		return
	}
	r.writeText(filepath.Join(sub.Dir(), AnswerFile), []string{content})
}

// KeepArtifact copies an artifact into the record as ArtifactsDir/name,
// now rather than in the background (the answer that names it is not
// recorded before the copy is there), with what fill writes. It returns
// the copy's path in the record ("artifacts/NAME").
func (r *Run) KeepArtifact(name string, fill func(io.Writer) error) (string, error) {
	if r.Dir() == "" {
		return "", fmt.Errorf("the run keeps no record")
	}
	path := filepath.Join(r.Dir(), ArtifactsDir, name)
	if err := r.store.writeVia(path, false, nil, fill); err != nil {
		return "", err
	}
	return ArtifactsDir + "/" + name, nil
}

// Flush waits until every file queued so far (by r, and by the runs that
// share its writer) is written: tools flush before they read the record as
// run:PATH, and a turn's caller before it exits, once it has answered
// (engine's Result.Recorded).
func (r *Run) Flush() { r.w.flush() }

// WriteQueued starts writing what the record has queued, in the background:
// the engine calls it when the turn waits on a tool, so that a long turn's
// record is written along the way.
func (r *Run) WriteQueued() { r.w.start() }

// Warning is the run's warning about a record it could not write, or "".
func (r *Run) Warning() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		return ""
	}
	return fmt.Sprintf("the run record could not be written (%v): `coda result %s` will not find this run, or not all of it", r.err, r.head.RunID)
}

// Visit begins the record of the run's next stage visit: the nth visit
// of stage.
func (r *Run) Visit(stage string, n int) *Visit {
	if r.seq++; r.seq > 1 {
		r.w.start() // the visits before it are done: their files are written meanwhile
	}
	v := &Visit{run: r}
	if r.Dir() != "" {
		v.dir = filepath.Join(r.Dir(), "stages", fmt.Sprintf("%03d-%s@%d", r.seq, stage, n))
	}
	return v
}

// A Visit is one stage visit's part of a run's record. A visit's files
// are written when it ends, however it ends, so a run costs a few file
// writes per stage rather than per model call.
type Visit struct {
	run *Run
	dir string
}

// Dir is the visit's directory, "" when the run keeps no record.
func (v *Visit) Dir() string { return v.dir }

// RunPath is the visit's directory as the run's tools name it, without
// the run: prefix ("stages/002-review@1"); "" when no record is kept.
func (v *Visit) RunPath() string {
	if v.dir == "" {
		return ""
	}
	rel, err := filepath.Rel(v.run.Dir(), v.dir)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// WritePrompt queues prompt.md, the prompt as sent, with what fill writes.
func (v *Visit) WritePrompt(fill func(io.Writer) error) { v.write("prompt.md", fill) }

// WriteResponse queues response.md, what the model answered and the tools
// returned, with what fill writes.
func (v *Visit) WriteResponse(fill func(io.Writer) error) { v.write("response.md", fill) }

// WriteStatus queues status.json: status, encoded now.
func (v *Visit) WriteStatus(status any) { v.writeJSON("status.json", status) }

// WriteAudit queues taint_audit.json: the taint gate's decisions in the
// visit so far, encoded now.
func (v *Visit) WriteAudit(audit any) { v.writeJSON("taint_audit.json", audit) }

// WriteText queues one of the visit's texts kept whole (AnswerFile,
// LastResponseFile), in the pieces given, which are written one after
// the other: a text is not joined into a copy to be written.
func (v *Visit) WriteText(file string, text ...string) {
	if v.dir != "" {
		v.run.writeText(filepath.Join(v.dir, file), text)
	}
}

func (v *Visit) write(file string, fill func(io.Writer) error) {
	if v.dir != "" {
		v.run.write(filepath.Join(v.dir, file), fill)
	}
}

func (v *Visit) writeJSON(file string, x any) {
	if v.dir != "" {
		v.run.writeJSON(filepath.Join(v.dir, file), x)
	}
}

// write queues writing path atomically with what fill writes, noting the
// outcome. fill runs later, on the writer's goroutine: what it writes must
// not change after it is queued.
func (r *Run) write(path string, fill func(io.Writer) error) {
	r.w.do(path, func() {
		defer func() {
			// A failing file must not end coda: the writer's goroutine is
			// no turn's, so nothing else would recover it.
			if p := recover(); p != nil {
				r.wrote(path, fmt.Errorf("writing failed inside coda: %v", p))
			}
		}()
		r.wrote(path, r.store.writeWhole(path, false, fill))
	})
}

// writeJSON queues x, encoded now, as the file at path.
func (r *Run) writeJSON(path string, x any) {
	b, err := MarshalRecord(x)
	if err != nil {
		r.wrote(path, err)
		return
	}
	r.write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeText queues text, its pieces in order, as the file at path.
func (r *Run) writeText(path string, text []string) {
	r.write(path, func(w io.Writer) error {
		for _, s := range text {
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// wrote notes the outcome of writing path: the first failure is logged and
// kept, later ones only logged at debug level.
func (r *Run) wrote(path string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
	case r.err == nil:
		r.err = err
		r.log.Warn("writing the run record", "path", path, "err", err)
	default:
		r.log.Debug("writing the run record", "path", path, "err", err)
	}
}

// A writer writes the record files of a run and of its workers and
// children on one goroutine of its own, one file at a time in the order
// they were queued. It writes only what was queued when it was last
// started (start, flush): what is queued later waits for the next start. A
// file queued again while its earlier version still waits to be started is
// written once, in the later place.
type writer struct {
	mu    sync.Mutex
	jobs  []job
	ready int           // the jobs at the front that were started
	idle  chan struct{} // closed when the started jobs are done; nil while none runs
}

// A job is one file to write ("" for other work).
type job struct {
	path string
	do   func()
}

// do queues f, which writes path.
func (w *writer) do(path string, f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if path != "" {
		held := slices.DeleteFunc(w.jobs[w.ready:], func(j job) bool { return j.path == path })
		w.jobs = w.jobs[:w.ready+len(held)]
	}
	w.jobs = append(w.jobs, job{path, f})
}

// start writes what is queued, in the background.
func (w *writer) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.startLocked()
}

func (w *writer) startLocked() {
	w.ready = len(w.jobs)
	if w.idle == nil && w.ready > 0 {
		w.idle = make(chan struct{})
		go w.drain()
	}
}

func (w *writer) drain() {
	for {
		w.mu.Lock()
		if w.ready == 0 {
			close(w.idle)
			w.idle = nil
			if len(w.jobs) == 0 {
				w.jobs = nil // not the array of all written so far
			}
			w.mu.Unlock()
			return
		}
		j := w.jobs[0]
		w.jobs[0] = job{}
		w.jobs, w.ready = w.jobs[1:], w.ready-1
		w.mu.Unlock()
		j.do()
	}
}

// flush writes what is queued and waits until it is written.
func (w *writer) flush() {
	w.mu.Lock()
	w.startLocked()
	idle := w.idle
	w.mu.Unlock()
	if idle != nil {
		<-idle
	}
}
