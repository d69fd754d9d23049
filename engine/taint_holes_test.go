package engine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every artifact is scanned whole: one with a NUL byte in its first 8 KiB
// (binary), one past 8 MiB with the key at its end, carry the key, and are
// refused under deny; an artifact without it goes through.
func TestTaint_artifactsScannedWhole(t *testing.T) {
	f := newTaintFixture(t, "[agent.taint]\npolicy = \"deny\"\n", readEnv+`
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Attached.", artifacts = ["dump.bin"] }

[[turn]]
expect = "It contains (masked here): `+maskedLine+`."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Attached.", artifacts = ["big.log"] }

[[turn]]
expect = "It contains (masked here): `+maskedLine+`."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Attached.", artifacts = ["README.md"] }
`, nil)
	work := f.turn.Workspace.Cwd()
	bin := append([]byte{0x7f, 'E', 'L', 'F', 0, 0, 1}, bytes.Repeat([]byte{0, 0xff}, 4096)...)
	bin = append(bin, []byte("\x00key="+secretKey+"\x00")...)
	if err := os.WriteFile(filepath.Join(work, "dump.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("an ordinary log line, nothing to see\n"), 9<<20/37)
	big = append(big, []byte("at last: "+secretLine+"\n")...)
	if err := os.WriteFile(filepath.Join(work, "big.log"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	res := f.run(t)
	if res.Answer == nil || len(res.Answer.Artifacts) != 1 || res.Answer.Artifacts[0].Path != "README.md" {
		t.Fatalf("answer = %+v, want README.md attached, the binary and the 9 MiB artifact refused", res.Answer)
	}
	recs := f.audit(t)
	if len(recs) != 2 || !slices.Equal(recs[0].Matches, []string{maskedLine}) || !slices.Equal(recs[1].Matches, []string{maskedLine}) {
		t.Errorf("audit = %+v", recs)
	}
}
