package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// floorAgent is the no-SDK floor of issue 14's start-up target: a Go
// program that answers initialize with a fixed line, and nothing else.
const floorAgent = `package main

import (
	"bufio"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	if _, err := r.ReadString('\n'); err != nil {
		return
	}
	os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{},\"authMethods\":[]}}\n")
	r.ReadString('\n')
}
`

// BenchmarkStartup measures spawn → initialize answered for coda, built
// as README installs it (CGO_ENABLED=0), and for the floor, in turns, and
// reports each (coda-ms, floor-ms) and their ratio (issue 14's target:
// ≤ 2.5). Both binaries are built first, outside the measurement.
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	build := func(out string, args ...string) {
		cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("go build: %v\n%s", err, msg)
		}
	}
	coda, floor := filepath.Join(dir, "coda"), filepath.Join(dir, "floor")
	build(coda, ".")
	if err := os.WriteFile(filepath.Join(dir, "floor.go"), []byte(floorAgent), 0o644); err != nil {
		b.Fatal(err)
	}
	build(floor, filepath.Join(dir, "floor.go"))
	state, script := filepath.Join(dir, "state"), filepath.Join(dir, "script.toml")
	if err := os.WriteFile(script, []byte("[[turn]]\ntext = \"ok\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	start := func(bin string, args ...string) time.Duration {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			b.Fatalf("%s: no answer to initialize: %v", bin, err)
		}
		took := time.Since(t0)
		in.Close()
		cmd.Wait()
		return took
	}
	var codaT, floorT time.Duration
	for b.Loop() {
		codaT += start(coda, "--state-dir", state, "--model", "script:"+script)
		floorT += start(floor)
	}
	n := float64(b.N)
	b.ReportMetric(codaT.Seconds()*1e3/n, "coda-ms")
	b.ReportMetric(floorT.Seconds()*1e3/n, "floor-ms")
	b.ReportMetric(float64(codaT)/float64(floorT), "coda/floor")
}
