package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/store"
)

// A recorder writes a run's record under STATE/runs/RUN-ID. Every file is
// written atomically, so a reader never sees half of one, and what a run
// wrote so far survives its failure or cancellation. The files are written
// in the background, in order (recordWriter): a turn's updates never wait
// for the disk.
//
// A record that cannot be written (a state directory that is read-only,
// full, or not a directory) does not stop the run: the first failure is
// kept in err, and the run says so once in its warnings (recordWarning).
type recorder struct {
	t       *Turn
	store   *store.Store // nil keeps no record
	started time.Time
	seq     int
	begun   bool // run.json written as running
	log     *slog.Logger
	w       *recordWriter // shared with the run's workers and children

	mu  sync.Mutex
	err error // the first write that failed

	dirOnce sync.Once
	path    string // dir's
}

// A recordWriter writes the record files of a run and of its workers and
// children on one goroutine of its own, one file at a time in the order
// they were queued. flush waits until every queued file is written: a run
// flushes before its closing answer (whose warnings say whether the record
// could be written) and again before Run returns, so a prompt is answered,
// and coda exits (signals included: acp answers every prompt in flight
// first), only once its run.json is final. Tools flush before they read
// the record as run:PATH. The goroutine runs only while there is work.
type recordWriter struct {
	mu   sync.Mutex
	jobs []func()
	idle chan struct{} // closed when the queue empties; nil while none runs
	// made are the directories made so far: each is made once, not per
	// file. Only the draining goroutine reads or writes it.
	made map[string]bool
}

// beforeRecordWrite, when set (by tests), is called on the writer's
// goroutine before each file of a record is written.
var beforeRecordWrite atomic.Pointer[func(path string)]

// do queues job.
func (w *recordWriter) do(job func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs = append(w.jobs, job)
	if w.idle == nil {
		w.idle = make(chan struct{})
		go w.drain()
	}
}

func (w *recordWriter) drain() {
	for {
		w.mu.Lock()
		if len(w.jobs) == 0 {
			close(w.idle)
			w.idle, w.jobs = nil, nil
			w.mu.Unlock()
			return
		}
		job := w.jobs[0]
		w.jobs[0] = nil
		w.jobs = w.jobs[1:]
		w.mu.Unlock()
		job()
	}
}

// flush waits until every file queued so far is written.
func (w *recordWriter) flush() {
	w.mu.Lock()
	idle := w.idle
	w.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// mkdir makes dir once.
func (w *recordWriter) mkdir(dir string) error {
	if w.made[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if w.made == nil {
		w.made = map[string]bool{}
	}
	w.made[dir] = true
	return nil
}

// write queues writing path atomically with what fill writes, noting the
// outcome in rec. fill runs later, on the writer's goroutine: what it
// writes must not change after it is queued.
func (rec *recorder) write(path string, fill func(io.Writer) error) {
	rec.w.do(func() {
		defer func() {
			// A failing file must not end coda: the writer's goroutine is
			// no turn's, so nothing else would recover it.
			if p := recover(); p != nil {
				rec.wrote(path, fmt.Errorf("writing failed inside coda: %v", p))
			}
		}()
		if hook := beforeRecordWrite.Load(); hook != nil {
			(*hook)(path)
		}
		err := rec.w.mkdir(filepath.Dir(path))
		if err == nil {
			err = writeAtomicIn(path, fill)
		}
		rec.wrote(path, err)
	})
}

// RunRecord is run.json.
type RunRecord struct {
	RunID      string   `json:"runId"`
	Agent      string   `json:"agent"`
	Session    string   `json:"session,omitempty"`
	Started    string   `json:"started"`
	Ended      string   `json:"ended,omitempty"`
	Status     string   `json:"status"`
	StopReason string   `json:"stopReason,omitempty"`
	Error      string   `json:"error,omitempty"`
	Flags      []string `json:"flags"`
	Warnings   []string `json:"warnings"`
	Prompt     string   `json:"prompt"`
	Files      []string `json:"filesWritten"`
	// FinalOutput is the answer record, or null.
	FinalOutput *Answer `json:"finalOutput"`
	// Workers and Children are the run's fan_out workers and spawned
	// children; their records are under workers/NAME and children/NAME.
	Workers  []SubRun `json:"workers,omitempty"`
	Children []SubRun `json:"children,omitempty"`
	// Taint counts the taint gate's decisions; only when it is on.
	Taint *TaintCounts `json:"taint,omitempty"`
	// NoAnswer says why there is none; Unavailable is the model's reason
	// when it declared the answer unavailable (noanswer.go).
	NoAnswer    string `json:"noAnswer,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
}

// StageStatus is a stage visit's status.json.
type StageStatus struct {
	Stage      string      `json:"stage"`
	Visit      int         `json:"visit"`
	Iterations int         `json:"iterations"`
	Revisits   int         `json:"revisits"`
	Repairs    int         `json:"repairs"` // refused submissions (repair.go)
	Outcome    string      `json:"outcome"`
	Error      string      `json:"error,omitempty"`
	Answered   bool        `json:"answered"`
	Files      []string    `json:"filesWritten"`
	Calls      []CallUsage `json:"calls"`
	Tools      []ToolUse   `json:"tools"`
}

// CallUsage records one model call.
type CallUsage struct {
	StopReason string `json:"stopReason"`
	Usage      Usage  `json:"usage"`
}

// ToolUse records one tool call.
type ToolUse struct {
	Name  string `json:"name"`
	Error bool   `json:"error"`
}

func newRecorder(r *run, st *store.Store, w *recordWriter) *recorder {
	return &recorder{t: r.t, store: st, started: time.Now().UTC(), log: r.log, w: w}
}

// sub is the recorder of a worker or child r of rec's run: its record
// nests in rec's (workers/wN, children/cN: its run id says where), written
// by rec's writer, in order; none when rec keeps none.
func (rec *recorder) sub(r *run) *recorder {
	st := rec.store
	if rec.dir() == "" {
		st = nil
	}
	return newRecorder(r, st, rec.w)
}

// dir is where the run's record is kept (RunDir), "" when no records are.
// It is made on first use, after the turn's first update: a prompt that
// comes after a pause runs that path on cold caches, where joining and
// cleaning a path cost a few µs (BenchmarkRun_firstUpdate, after-idle).
func (rec *recorder) dir() string {
	rec.dirOnce.Do(func() {
		if rec.t.RunID != "" {
			rec.path = rec.store.RunDir(rec.t.RunID)
		}
	})
	return rec.path
}

// RunDir is where a run's record lives.
func RunDir(stateDir, runID string) string { return filepath.Join(stateDir, "runs", runID) }

// start writes run.json as running, once.
func (rec *recorder) start() {
	if rec.begun {
		return
	}
	rec.begun = true
	rec.writeRun(&RunRecord{Status: "running"})
}

func (rec *recorder) finish(res *Result) {
	rr := &RunRecord{Status: res.Status, StopReason: res.StopReason, Flags: res.Flags, Warnings: res.Warnings, FinalOutput: res.Answer, Files: res.Written,
		Workers: res.Workers, Children: res.Children, Taint: res.Taint,
		NoAnswer: res.NoAnswer, Unavailable: res.Unavailable}
	rr.Ended = time.Now().UTC().Format(time.RFC3339Nano)
	if res.Err != nil {
		rr.Error = res.Err.Error()
	}
	rec.writeRun(rr)
}

func (rec *recorder) writeRun(rr *RunRecord) {
	if rec.dir() == "" {
		return
	}
	rr.RunID, rr.Session, rr.Prompt = rec.t.RunID, rec.t.SessionID, rec.t.Prompt
	rr.Agent = rec.t.Agent.Agent.Name
	rr.Started = rec.started.Format(time.RFC3339Nano)
	rr.Flags, rr.Warnings, rr.Files = nonNil(rr.Flags), nonNil(rr.Warnings), nonNil(rr.Files)
	rec.writeJSON(filepath.Join(rec.dir(), "run.json"), rr)
}

// writeJSON queues v, encoded now, as the file at path.
func (rec *recorder) writeJSON(path string, v any) {
	b, err := MarshalRecord(v)
	if err != nil {
		rec.wrote(path, err)
		return
	}
	rec.writeBytes(path, b)
}

// MarshalRecord encodes a record (run.json, an answer record) as people
// and pipelines read it: indented, ending in a newline, and with <, >
// and & as they are, not HTML-escaped.
func MarshalRecord(v any) ([]byte, error) { return encodeRecord(v, "  ") }

// encodeRecord encodes v without HTML escapes, indented by indent ("":
// one line, as a model is given a record).
func encodeRecord(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeBytes queues data as the file at path.
func (rec *recorder) writeBytes(path string, data []byte) {
	rec.write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeText queues text as the file at path.
func (rec *recorder) writeText(path, text string) {
	rec.write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
}

// wrote notes the outcome of writing path: the first failure is logged and
// kept, later ones only logged at debug level.
func (rec *recorder) wrote(path string, err error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	switch {
	case err == nil:
	case rec.err == nil:
		rec.err = err
		rec.log.Warn("writing the run record", "path", path, "err", err)
	default:
		rec.log.Debug("writing the run record", "path", path, "err", err)
	}
}

// recordWarning is the run's warning about a record it could not write,
// or "".
func (rec *recorder) recordWarning() string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.err == nil {
		return ""
	}
	return fmt.Sprintf("the run record could not be written (%v): `coda result %s` will not find this run, or not all of it", rec.err, rec.t.RunID)
}

// visitRecord records one stage visit.
type visitRecord struct {
	rec    *recorder
	dir    string
	status StageStatus
	// resp is response.md in pieces: the model's text is kept by
	// reference, not copied, since a streamed reply can be megabytes.
	resp []string
	// earlier are the session's earlier turns the visit's first messages
	// carry (stage.go's prepare), a user and an assistant message each.
	earlier []Exchange
	// audit is the taint gate's decisions in this visit, as
	// taint_audit.json lists them (taint_audit.go). Only the visit's own
	// goroutine touches it; writeJSON encodes it when queued.
	audit []TaintAudit
}

func (rec *recorder) visit(stage string, n int) *visitRecord {
	rec.seq++
	vr := &visitRecord{rec: rec, status: StageStatus{Stage: stage, Visit: n, Outcome: "running", Calls: []CallUsage{}, Tools: []ToolUse{}}}
	if rec.dir() != "" {
		vr.dir = filepath.Join(rec.dir(), "stages", fmt.Sprintf("%03d-%s@%d", rec.seq, stage, n))
	}
	return vr
}

// call records a model call: the prompt as sent (written at the first
// call) and the response, kept until the visit ends. A visit's files are
// written when it ends, however it ends, so a run costs a few file writes
// per stage rather than per model call.
func (vr *visitRecord) call(req *Request, resp *Response) {
	if vr.dir == "" {
		return
	}
	if len(vr.status.Calls) == 0 {
		system, msgs, earlier := req.System, req.Messages, vr.earlier
		vr.rec.write(filepath.Join(vr.dir, "prompt.md"), func(w io.Writer) error {
			return writePrompt(w, system, msgs, earlier)
		})
	}
	vr.status.Calls = append(vr.status.Calls, CallUsage{StopReason: resp.StopReason, Usage: resp.Usage})
	vr.resp = append(vr.resp, fmt.Sprintf("## Call %d\n\n", len(vr.status.Calls)))
	if resp.Thinking != "" {
		vr.resp = append(vr.resp, "Thinking:\n\n", resp.Thinking, "\n\n")
	}
	if resp.Text != "" {
		vr.resp = append(vr.resp, resp.Text, "\n\n")
	}
	for _, tc := range resp.ToolCalls {
		vr.resp = append(vr.resp, fmt.Sprintf("Tool call %s: %s\n\n", tc.Name, shownArgs(tc)))
	}
}

// writePrompt writes prompt.md: the system prompt and the messages as
// sent, except that an earlier turn of the session with a run id is named
// by it, not written out again: its own record has it whole, and a long
// session would otherwise rewrite its whole history at every turn.
func writePrompt(w io.Writer, system string, msgs []Message, earlier []Exchange) error {
	fmt.Fprintf(w, "# System\n\n%s\n", system)
	for i, m := range msgs {
		if i < 2*len(earlier) {
			if id := earlier[i/2].RunID; id != "" {
				if i%2 == 0 {
					fmt.Fprintf(w, "\n[earlier turn: run %s]\n", id)
				}
				continue
			}
		}
		fmt.Fprintf(w, "\n# %s\n\n%s\n", m.Role, m.Text)
		for _, im := range m.Images {
			fmt.Fprintf(w, "\n[image %s, %s]\n", im.MIMEType, bytesize.Format(len(im.Data)))
		}
	}
	return nil
}

func (vr *visitRecord) tool(tc ToolCall, res ToolResult) {
	vr.status.Tools = append(vr.status.Tools, ToolUse{Name: tc.Name, Error: res.IsError})
	if vr.dir != "" {
		out := res.Output
		if res.private != "" {
			out = "[withheld from the record: this result carries content of " + res.private + ", private under the taint gate]"
		}
		head := "Result of " + tc.Name + ":\n\n"
		if res.IsError {
			head = "Result of " + tc.Name + " (error):\n\n"
		}
		vr.resp = append(vr.resp, head, out, "\n\n")
	}
}

func (vr *visitRecord) finish(v *stageVisit, err error) {
	vr.status.Iterations, vr.status.Revisits, vr.status.Repairs = v.iterations, v.nudgesSent(), v.rep.refused
	vr.status.Answered = v.submitted != nil
	vr.status.Files = nonNil(v.written)
	switch {
	case err != nil:
		vr.status.Outcome, vr.status.Error = "ended by error", err.Error()
	default:
		vr.status.Outcome = "completed"
	}
	if vr.dir != "" {
		resp := vr.resp
		vr.rec.write(filepath.Join(vr.dir, "response.md"), func(w io.Writer) error {
			for _, s := range resp {
				if _, err := io.WriteString(w, s); err != nil {
					return err
				}
			}
			return nil
		})
		vr.rec.writeJSON(filepath.Join(vr.dir, "status.json"), &vr.status)
		vr.writeTexts(v)
	}
}

func (vr *visitRecord) write(name, content string) {
	vr.rec.writeText(filepath.Join(vr.dir, name), content)
}

// writeAtomic writes what fill writes to path through a temporary file
// and a rename, creating the directory.
func writeAtomic(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomicIn(path, fill)
}

// writeAtomicIn is writeAtomic in a directory that exists.
func writeAtomicIn(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// CheckRunID says why id cannot name a run, or nil. A run id is a name in
// the state directory, never a path: `coda result ../../x` must not read
// outside it.
func CheckRunID(id string) error {
	switch {
	case id == "":
		return errors.New("the run id is empty")
	case strings.ContainsAny(id, `/\`+"\x00") || id == "." || id == ".." || !filepath.IsLocal(id):
		return fmt.Errorf("%q is not a run id: a run id is a name, such as 20260102-150405-a1b2c3, not a path", id)
	}
	return nil
}

// ReadRun reads a run's run.json.
func ReadRun(stateDir, runID string) (*RunRecord, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	rr, err := readRunFile(RunDir(stateDir, runID), runID)
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("no run %q in %s", runID, filepath.Join(stateDir, "runs"))
	}
	return rr, err
}

// readRunFile reads the run.json in dir; name names the run in messages.
func readRunFile(dir, name string) (*RunRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, err
	}
	var rr RunRecord
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("run %s: run.json: %v", name, err)
	}
	return &rr, nil
}
