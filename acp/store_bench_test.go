package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/acp/history"
	statestore "github.com/coda-acp/coda/store"
)

// benchClient serves srv over pipes and sends requests one at a time,
// reading coda's lines until each one's answer.
type benchClient struct {
	w     io.Writer
	lines *bufio.Scanner
	id    int
	last  string // the last answer read
}

func newBenchClient(b *testing.B, srv *Server) *benchClient {
	toServer, clientW := io.Pipe()
	clientR, fromServer := io.Pipe()
	go func() {
		srv.Serve(context.Background(), toServer, fromServer)
		fromServer.Close()
	}()
	b.Cleanup(func() { clientW.Close(); io.Copy(io.Discard, clientR) })
	sc := bufio.NewScanner(clientR)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	c := &benchClient{w: clientW, lines: sc}
	c.call(b, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	return c
}

// call sends a request and reads up to its answer; it returns how many
// lines came before it.
func (c *benchClient) call(b *testing.B, method, params string) int {
	c.id++
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, c.id)
	for n := 0; c.lines.Scan(); n++ {
		if line := c.lines.Text(); strings.HasPrefix(line, answer) {
			c.last = line
			if strings.Contains(line, `"error"`) {
				b.Fatalf("%s: %s", method, line)
			}
			return n
		}
	}
	b.Fatalf("%s: no answer (%v)", method, c.lines.Err())
	return 0
}

// BenchmarkSessionLoad_200turns: session/load of a 200-turn session, from
// the request to its answer, which follows the last replayed update.
func BenchmarkSessionLoad_200turns(b *testing.B) {
	state, cwd := b.TempDir(), b.TempDir()
	srv := testServer(b, state, Options{})
	writeSession(b, state, "s-bench", cwd, 200, time.Now())
	srv, _ = NewServer(srv.opts)
	c := newBenchClient(b, srv)
	params := fmt.Sprintf(`{"sessionId":"s-bench","cwd":%q,"mcpServers":[]}`, cwd)
	b.ResetTimer()
	for b.Loop() {
		if n := c.call(b, "session/load", params); n < 400 {
			b.Fatalf("session/load replayed %d lines, want 400", n)
		}
	}
}

// BenchmarkSessionList: one session/list page of 50 from the middle of the
// list, at 100 and at 10,000 sessions, page about in one run (issue 23:
// the second ≤ 2× the first; the page@10k/page@100 metric). The first page,
// which reads the index and the directory once, is read before the timer
// starts; a page after it reads the index alone, so the sessions' lengths
// (2 turns each) do not matter.
func BenchmarkSessionList(b *testing.B) {
	type lister struct {
		c      *benchClient
		params string
		took   []time.Duration
	}
	setup := func(n int) *lister {
		state, cwd := b.TempDir(), b.TempDir()
		srv := testServer(b, state, Options{})
		base := time.Now()
		for i := range n {
			writeSession(b, state, fmt.Sprintf("s-%05d", i), cwd, 2, base.Add(-time.Duration(i)*time.Minute))
		}
		srv, _ = NewServer(srv.opts)
		c := newBenchClient(b, srv)
		c.call(b, "session/list", fmt.Sprintf(`{"cwd":%q}`, cwd))
		// After the session before the middle page: 50 follow it, and more.
		at := (n-50)/2 - 1
		mid := &statestore.SessionInfo{ID: fmt.Sprintf("s-%05d", at), UpdatedAt: base.Add(-time.Duration(at) * time.Minute).UTC()}
		return &lister{c: c, params: fmt.Sprintf(`{"cwd":%q,"cursor":%q}`, cwd, history.Cursor(mid))}
	}
	small, large := setup(100), setup(10000)
	b.ResetTimer()
	for b.Loop() {
		for _, l := range []*lister{small, large} {
			start := time.Now()
			l.c.call(b, "session/list", l.params)
			l.took = append(l.took, time.Since(start))
			if !strings.Contains(l.c.last, `"nextCursor"`) || strings.Count(l.c.last, `"sessionId"`) != 50 {
				b.Fatalf("a page from the middle is not 50 sessions and a next cursor: %.300s", l.c.last)
			}
		}
	}
	b.ReportMetric(ms(median(small.took)), "page@100-ms")
	b.ReportMetric(ms(median(large.took)), "page@10k-ms")
	b.ReportMetric(float64(median(large.took))/float64(median(small.took)), "page@10k/page@100")
}

// BenchmarkTurnHistory: a turn, from the prompt to its answer, in a new
// session and in one whose file holds 100 MB of history, turn about in one
// run (issue 23: the second ≤ 1.3× the first, the 100MB/new metric; it was
// 170–190 ms against 8 when every turn rewrote the file).
func BenchmarkTurnHistory(b *testing.B) {
	type session struct {
		srv    *Server
		c      *benchClient
		params string
		took   []time.Duration
	}
	setup := func(mb int) *session {
		state, cwd := b.TempDir(), b.TempDir()
		srv := testServer(b, state, Options{})
		srv, _ = NewServer(srv.opts)
		c := newBenchClient(b, srv)
		id := "s-history"
		if mb == 0 {
			c.call(b, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd))
			var res struct{ Result newSessionResponse }
			if err := json.Unmarshal([]byte(c.last), &res); err != nil {
				b.Fatal(err)
			}
			id = res.Result.SessionID
		} else {
			writeSession(b, state, id, cwd, mb<<20/3700, time.Now())
			c.call(b, "session/resume", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, cwd))
			if fi, err := os.Stat(sessionFile(srv.load.store, id)); err != nil || fi.Size() < int64(mb)<<20*9/10 {
				b.Fatalf("the session's file: %v, %v", fi, err)
			}
		}
		return &session{srv: srv, c: c, params: fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"where is the config parsed?"}]}`, id)}
	}
	fresh, old := setup(0), setup(100)
	b.ResetTimer()
	for b.Loop() {
		for _, s := range []*session{fresh, old} {
			turns(b, s.srv, s.c, s.params, true, &s.took)
		}
	}
	b.ReportMetric(ms(median(fresh.took)), "new-ms")
	b.ReportMetric(ms(median(old.took)), "100MB-ms")
	b.ReportMetric(float64(median(old.took))/float64(median(fresh.took)), "100MB/new")
}

// BenchmarkTurnState measures a turn's fixed state cost: a prompt answered
// at once, from the request to its answer, with the state directory on a
// disk's file system (ext4 here: the test's temp directory, or the
// package's own when that is tmpfs, or CODA_BENCH_DISK), on tmpfs
// (/dev/shm), and with none, in rounds about in one run. It reports each
// one's median turn and the disk/tmpfs ratio (issue 23: ≤ 2, and the
// disk's median ≤ 5 ms; it was 14.4 ms against 3.3 when the record was
// written before the answer): each turn sent once the one before is
// recorded, as when a person reads an answer before the next prompt; and,
// as b2b-, sent as soon as the one before is answered, its record still
// being written. fsync-ms is a bare append and fsync of a line on the same
// disk, in the same rounds, and floor-disk/tmpfs the least disk/tmpfs any
// turn can reach that syncs its answer before sending it: (tmpfs-ms +
// fsync-ms) / tmpfs-ms.
func BenchmarkTurnState(b *testing.B) {
	type where struct {
		name      string
		srv       *Server
		c         *benchClient
		params    string
		took, b2b []time.Duration
	}
	setup := func(name, state string) *where {
		srv := testServer(b, state, Options{})
		srv, _ = NewServer(srv.opts)
		c := newBenchClient(b, srv)
		c.call(b, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, b.TempDir()))
		var res struct{ Result newSessionResponse }
		if err := json.Unmarshal([]byte(c.last), &res); err != nil {
			b.Fatal(err)
		}
		return &where{name: name, srv: srv, c: c, params: fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"where is the config parsed?"}]}`, res.Result.SessionID)}
	}
	shm, err := os.MkdirTemp("/dev/shm", "coda-bench")
	if err != nil {
		b.Skip("no /dev/shm")
	}
	b.Cleanup(func() { os.RemoveAll(shm) })
	if fs := fsType(shm); fs != "tmpfs" {
		b.Skipf("/dev/shm is %s, not tmpfs", fs)
	}
	disk := diskDir(b)
	b.Logf("disk: %s (%s)", disk, fsType(disk))
	all := []*where{setup("none", ""), setup("tmpfs", shm), setup("disk", disk)}
	// The floor: a line appended to a file on the disk and synced, as the
	// session's append is before the answer (the answer durable before it
	// is sent), timed in the same rounds. A turn on the disk costs at
	// least a turn on tmpfs and this.
	synced, err := os.OpenFile(filepath.Join(disk, "fsync-floor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer synced.Close()
	line := append(bytes.Repeat([]byte("x"), 1023), '\n')
	var fsyncs []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, w := range all {
			turns(b, w.srv, w.c, w.params, true, &w.took)
			turns(b, w.srv, w.c, w.params, false, &w.b2b)
		}
		for range 10 {
			start := time.Now()
			if _, err := synced.Write(line); err != nil {
				b.Fatal(err)
			}
			if err := synced.Sync(); err != nil {
				b.Fatal(err)
			}
			fsyncs = append(fsyncs, time.Since(start))
		}
	}
	for _, w := range all {
		b.ReportMetric(ms(median(w.took)), w.name+"-ms")
	}
	tmpfs := median(all[1].took)
	b.ReportMetric(float64(median(all[2].took))/float64(tmpfs), "disk/tmpfs")
	b.ReportMetric(float64(median(all[2].b2b))/float64(median(all[1].b2b)), "b2b-disk/tmpfs")
	b.ReportMetric(ms(median(fsyncs)), "fsync-ms")
	b.ReportMetric(float64(tmpfs+median(fsyncs))/float64(tmpfs), "floor-disk/tmpfs")
}

// turns runs a round of 10 turns in one session, one after the other, each
// timed from the prompt to its answer. When paused, each is sent once the
// server owes nothing (the turn before recorded); else at once, what the
// turn before writes after its answer overlapping it. After the round,
// untimed, it waits until the server owes nothing, so that no round writes
// into another's.
func turns(b *testing.B, srv *Server, c *benchClient, params string, paused bool, took *[]time.Duration) {
	for range 10 {
		if paused {
			b.StopTimer()
			srv.conn.Wait()
			b.StartTimer()
		}
		start := time.Now()
		c.call(b, "session/prompt", params)
		*took = append(*took, time.Since(start))
	}
	b.StopTimer()
	srv.conn.Wait()
	b.StartTimer()
}

// diskDir is a directory for the benchmark's state on a disk's file system,
// not tmpfs: CODA_BENCH_DISK, the test's temp directory, or one made in the
// package's own directory (removed after).
func diskDir(b *testing.B) string {
	if d := os.Getenv("CODA_BENCH_DISK"); d != "" {
		dir, err := os.MkdirTemp(d, "coda-bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	if dir := b.TempDir(); fsType(dir) != "tmpfs" {
		return dir
	}
	dir, err := os.MkdirTemp(".", ".coda-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if fsType(dir) == "tmpfs" {
		b.Skip("no directory off tmpfs: set CODA_BENCH_DISK")
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
