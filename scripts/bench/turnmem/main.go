// Command turnmem measures the memory of a long turn (issue 14): coda runs
// as an ACP agent, and its OpenAI-style model streams a reply of -deltas
// text chunks (42 bytes each; 100,000 make 4.2 MB) that the stage takes as
// its answer. Every update is read, as an editor would. For each binary it
// reports, as medians of -rounds, the process's peak resident set (VmHWM),
// its peak anonymous memory (RssAnon sampled every millisecond: the heap
// and stacks, without the executable's mapped pages), and the same for a
// one-chunk turn, the reference measured in the same round.
//
//	CGO_ENABLED=0 go build -o /tmp/coda ./cmd/coda
//	go run ./scripts/bench/turnmem -rounds 7 /tmp/coda [/path/to/other/coda ...]
//
// Linux only: it reads /proc.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	deltas := flag.Int("deltas", 100_000, "text chunks in the long reply")
	rounds := flag.Int("rounds", 7, "rounds; each runs every binary with a one-chunk and a long turn")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: turnmem [-deltas N] [-rounds R] CODA-BINARY...")
		os.Exit(2)
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		fmt.Fprintln(os.Stderr, "turnmem: needs Linux's /proc")
		os.Exit(2)
	}
	type figures struct{ hwm, anon []float64 }
	results := map[string]*figures{}
	key := func(bin string, n int) string { return fmt.Sprintf("%s %d", bin, n) }
	for r := range *rounds {
		for _, bin := range flag.Args() {
			for _, n := range []int{1, *deltas} {
				hwm, anon, err := measure(bin, n)
				if err != nil {
					fmt.Fprintf(os.Stderr, "turnmem: %s, %d chunks: %v\n", bin, n, err)
					os.Exit(1)
				}
				f := results[key(bin, n)]
				if f == nil {
					f = &figures{}
					results[key(bin, n)] = f
				}
				f.hwm, f.anon = append(f.hwm, hwm), append(f.anon, anon)
				fmt.Printf("round %d %s %7d chunks: VmHWM %.1f MB, peak anon %.1f MB\n", r+1, bin, n, hwm, anon)
			}
		}
	}
	for _, bin := range flag.Args() {
		one, long := results[key(bin, 1)], results[key(bin, *deltas)]
		fmt.Printf("median %s: %d chunks VmHWM %.1f MB, peak anon %.1f MB; one chunk VmHWM %.1f MB, peak anon %.1f MB; the long turn's own %.1f MB\n",
			bin, *deltas, median(long.hwm), median(long.anon), median(one.hwm), median(one.anon), median(long.hwm)-median(one.hwm))
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// measure runs one prompt turn of coda against a model streaming n chunks
// and returns its peak resident set and peak anonymous memory, in MB.
func measure(bin string, n int) (hwm, anon float64, err error) {
	addr, stop, err := serve(n)
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "turnmem")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, fmt.Appendf(nil, "[providers.fake]\nkind = \"openai\"\nbase_url = \"http://%s/v1\"\n", addr), 0o644); err != nil {
		return 0, 0, err
	}
	cwd := filepath.Join(dir, "cwd")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(bin, "--config", config, "--model", "fake:m", "--state-dir", filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), "FAKE_API_KEY=x", "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewReaderSize(stdout, 1<<20)
	call := func(id int, method string, params any) (json.RawMessage, error) {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(msg, '\n')); err != nil {
			return nil, err
		}
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("%s: %w", method, err)
			}
			var reply struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &reply) == nil && reply.ID != nil && *reply.ID == id {
				if reply.Error != nil {
					return nil, fmt.Errorf("%s: %s", method, reply.Error)
				}
				return reply.Result, nil
			}
		}
	}
	if _, err := call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return 0, 0, err
	}
	res, err := call(2, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return 0, 0, err
	}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &session)
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peakAnon atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if kb := field(status, "RssAnon:"); kb > peakAnon.Load() {
				peakAnon.Store(kb)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	_, err = call(3, "session/prompt", map[string]any{"sessionId": session.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	close(done)
	<-sampled
	if err != nil {
		return 0, 0, err
	}
	return float64(field(status, "VmHWM:")) / 1024, float64(peakAnon.Load()) / 1024, nil
}

// field reads a kB figure from a /proc status file.
func field(path, name string) int64 {
	data, _ := os.ReadFile(path)
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// serve starts an OpenAI-style server whose first reply streams n text
// chunks and whose later replies call submit_output.
func serve(n int) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var calls atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		defer bw.Flush()
		if calls.Add(1) > 1 {
			io.WriteString(bw, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"submit_output","arguments":"{\"content\":\"Short.\"}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		for i := range n {
			fmt.Fprintf(bw, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"chunk %06d of the streamed reply text.. "},"finish_reason":null}]}`+"\n\n", i)
		}
		io.WriteString(bw, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})}
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Close() }, nil
}
