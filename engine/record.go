package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A recorder writes a run's record under STATE/runs/RUN-ID. Every file is
// written atomically, so a reader never sees half of one, and what a run
// wrote so far survives its failure or cancellation.
//
// A record that cannot be written (a state directory that is read-only,
// full, or not a directory) does not stop the run: the first failure is
// kept in err, and the run says so once in its warnings (recordWarning).
type recorder struct {
	t       *Turn
	dir     string // "" when no records are kept
	started time.Time
	seq     int
	log     *slog.Logger
	err     error // the first write that failed
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

func newRecorder(t *Turn, log *slog.Logger) *recorder {
	rec := &recorder{t: t, started: time.Now().UTC(), log: log}
	if t.StateDir != "" && t.RunID != "" {
		rec.dir = RunDir(t.StateDir, t.RunID)
	}
	return rec
}

// RunDir is where a run's record lives.
func RunDir(stateDir, runID string) string { return filepath.Join(stateDir, "runs", runID) }

func (rec *recorder) start() {
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
	if rec.dir == "" {
		return
	}
	rr.RunID, rr.Session, rr.Prompt = rec.t.RunID, rec.t.SessionID, rec.t.Prompt
	rr.Agent = rec.t.Agent.Agent.Name
	rr.Started = rec.started.Format(time.RFC3339Nano)
	rr.Flags, rr.Warnings, rr.Files = nonNil(rr.Flags), nonNil(rr.Warnings), nonNil(rr.Files)
	rec.writeJSON(filepath.Join(rec.dir, "run.json"), rr)
}

func (rec *recorder) writeJSON(path string, v any) {
	b, err := MarshalRecord(v)
	if err == nil {
		err = WriteFileAtomic(path, b)
	}
	rec.wrote(path, err)
}

// wrote notes the outcome of writing path: the first failure is logged and
// kept, later ones only logged at debug level.
func (rec *recorder) wrote(path string, err error) {
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
}

func (rec *recorder) visit(stage string, n int) *visitRecord {
	rec.seq++
	vr := &visitRecord{rec: rec, status: StageStatus{Stage: stage, Visit: n, Outcome: "running", Calls: []CallUsage{}, Tools: []ToolUse{}}}
	if rec.dir != "" {
		vr.dir = filepath.Join(rec.dir, "stages", fmt.Sprintf("%03d-%s@%d", rec.seq, stage, n))
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
		var p strings.Builder
		fmt.Fprintf(&p, "# System\n\n%s\n", req.System)
		for _, m := range req.Messages {
			fmt.Fprintf(&p, "\n# %s\n\n%s\n", m.Role, m.Text)
			for _, im := range m.Images {
				fmt.Fprintf(&p, "\n[image %s, %s]\n", im.MIMEType, ByteSize(len(im.Data)))
			}
		}
		vr.write("prompt.md", p.String())
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

func (vr *visitRecord) tool(tc ToolCall, res ToolResult) {
	vr.status.Tools = append(vr.status.Tools, ToolUse{Name: tc.Name, Error: res.IsError})
	if vr.dir != "" {
		out := res.Output
		if res.private != "" {
			out = "[withheld from the record: this result carries content of " + res.private + ", private under the taint gate]"
		}
		vr.resp = append(vr.resp, fmt.Sprintf("Result of %s%s:\n\n", tc.Name, map[bool]string{true: " (error)"}[res.IsError]), out, "\n\n")
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
		path := filepath.Join(vr.dir, "response.md")
		vr.rec.wrote(path, writeAtomic(path, func(w io.Writer) error {
			for _, s := range vr.resp {
				if _, err := io.WriteString(w, s); err != nil {
					return err
				}
			}
			return nil
		}))
		vr.rec.writeJSON(filepath.Join(vr.dir, "status.json"), &vr.status)
		vr.writeTexts(v)
	}
}

func (vr *visitRecord) write(name, content string) {
	path := filepath.Join(vr.dir, name)
	vr.rec.wrote(path, WriteFileAtomic(path, []byte(content)))
}

// WriteFileAtomic writes data to path through a temporary file and a
// rename, creating the directory.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomic is WriteFileAtomic for content written by fill.
func writeAtomic(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
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
