package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// validators builds its heavy state (the Markdown parser, the Starlark
// built-ins and guards) when it is first used, not at start-up, where every
// coda process, one that only answers initialize included, would pay it:
// its init allocates under 16 KB (it was 34 KB).
func TestInit_light(t *testing.T) {
	if os.Getenv("CODA_INITTRACE_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInit_light$")
	cmd.Env = append(os.Environ(), "CODA_INITTRACE_CHILD=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`init github.com/coda-acp/coda/validators @[^,]*, [^,]*, (\d+) bytes`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no init trace of validators:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 16<<10 {
		t.Errorf("validators' init allocates %d bytes, want under 16 KB", n)
	}
}
