package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
)

// privateMiB is a 1 MiB .env of random keys, one a line.
func privateMiB() string {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	key := make([]byte, 30)
	for i := 0; b.Len() < 1<<20; i++ {
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		fmt.Fprintf(&b, "KEY_%05d=%s\n", i, base64.RawURLEncoding.EncodeToString(key))
	}
	return b.String()
}

// rootedAt is a workspace of one root, dir: all the gate asks of one
// under policy deny.
type rootedAt struct {
	Workspace
	dir string
}

func (w rootedAt) Cwd() string     { return w.dir }
func (w rootedAt) Roots() []string { return []string{w.dir} }

// taintedVisit is the gate of a stage visit of a run whose gate (policy deny) has read
// text from .env.
func taintedVisit(b *testing.B, text string) *visitGate {
	dir := b.TempDir()
	ws := rootedAt{dir: dir}
	r := &run{e: &Engine{Taint: taint.Launch{Policy: taint.Deny}}, t: &Turn{Workspace: ws, Agent: &blueprint.Blueprint{}}, log: nil}
	r.taint = newTaint(r)
	r.taint.Read([]taint.Source{{Path: filepath.Join(dir, ".env"), Text: text}})
	return &visitGate{g: r.taint, ws: ws, newID: r.e.NewID, log: r.log, rec: &visitRecord{}}
}

// BenchmarkTaintGate is the gate's cost per sink call once a 1 MiB private
// file was read, for calls that carry none of it (the common case: no
// audit is written): a shell command, a 4 KiB answer, and the largest
// answer (256 KiB). ref-shownArgs is what the engine already spends on each
// call, showing its arguments, for scale.
func BenchmarkTaintGate(b *testing.B) {
	// A gate that overflowed its bounds on the 1 MiB file would gate every
	// call: the loop's check fails then (BenchmarkRead checks the bounds).
	v := taintedVisit(b, privateMiB())
	cmd := "go test ./... -run TestSomething -count=1 2>&1 | tail -n 40 && git status --short"
	answer := strings.Repeat("The handler reads its key from the environment and retries on 429. ", 62)
	for _, bc := range []struct {
		name    string
		payload string
	}{
		{"shell-100B", cmd},
		{"answer-4KiB", answer[:4096]},
		{"answer-256KiB", strings.Repeat(answer[:4096], 64)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.payload)))
			for b.Loop() {
				if out := v.decide(ctx, "", taint.Call{Sink: "shell", Payload: []string{bc.payload}}, "execute", nil, nil); !out.Allowed {
					b.Fatal("gated a clean call")
				}
			}
		})
	}
	b.Run("ref-shownArgs-shell", func(b *testing.B) {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		tc := llm.ToolCall{Name: "shell", Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			_ = shownArgs(tc)
		}
	})
}
