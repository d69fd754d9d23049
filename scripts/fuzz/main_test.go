package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The outputs in testdata: crasher.out and build-failure.out are go test's
// own; coordinator-deadline.out is written after the failures reported for
// go.dev/issue/75804 (it cannot be made on demand), hung.out after go
// test's wording for a worker that hangs.
func output(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var errExit1 = errors.New("exit status 1")

func TestJudge(t *testing.T) {
	deadline := output(t, "coordinator-deadline.out")
	for _, tt := range []struct {
		name   string
		target string
		err    error
		out    string
		limit  time.Duration
		added  []string
		pass   bool
	}{
		{"pass", "FuzzCheckYAML", nil, output(t, "pass.out"), 20 * time.Second, nil, true},
		{"the coordinator's deadline", "FuzzCheckYAML", errExit1, deadline, 20 * time.Second, nil, true},
		{"the deadline, but an input was written", "FuzzCheckYAML", errExit1, deadline, 20 * time.Second, []string{"582528ddfad69eb5"}, false},
		{"the deadline before the budget is spent", "FuzzCheckYAML", errExit1, deadline, 30 * time.Second, nil, false},
		{"the deadline under a count budget", "FuzzCheckYAML", errExit1, deadline, 0, nil, false},
		{"the deadline of another target", "FuzzCheckXML", errExit1, deadline, 20 * time.Second, nil, false},
		{"the deadline and more said", "FuzzCheckYAML", errExit1, strings.Replace(deadline, "    context deadline exceeded\n", "    context deadline exceeded\n    yaml_test.go:9: broken\n", 1), 20 * time.Second, nil, false},
		{"the deadline in a panic", "FuzzCheckYAML", errExit1, deadline + "panic: context deadline exceeded\n", 20 * time.Second, nil, false},
		{"a crasher", "FuzzCrash", errExit1, output(t, "crasher.out"), 20 * time.Second, []string{"1de061fa29cfbb3d"}, false},
		{"a crasher whose file was there already", "FuzzCrash", errExit1, output(t, "crasher.out"), 20 * time.Second, nil, false},
		{"a hung worker", "FuzzCheckYAML", errExit1, output(t, "hung.out"), 20 * time.Second, []string{"582528ddfad69eb5"}, false},
		{"a build failure", "FuzzCheckYAML", errExit1, output(t, "build-failure.out"), 20 * time.Second, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := judge(tt.target, tt.err, tt.out, tt.limit, tt.added)
			if (err == nil) != tt.pass {
				t.Errorf("judge = %v, want pass %v", err, tt.pass)
			}
		})
	}
}

func TestParseBudget(t *testing.T) {
	for _, tt := range []struct {
		in    string
		limit time.Duration
		ok    bool
	}{
		{"20s", 20 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{"5000x", 0, true},
		{"0x", 0, false},
		{"x", 0, false},
		{"0s", 0, false},
		{"-1s", 0, false},
		{"soon", 0, false},
	} {
		limit, err := parseBudget(tt.in)
		if limit != tt.limit || (err == nil) != tt.ok {
			t.Errorf("parseBudget(%q) = %v, %v; want %v, ok %v", tt.in, limit, err, tt.limit, tt.ok)
		}
	}
}

func TestParseList(t *testing.T) {
	out := "FuzzA\nFuzzB\nok  \tex.com/m/a\t0.004s\n?   \tex.com/m/cmd\t[no test files]\nok  \tex.com/m/b\t0.002s\nFuzzC\nok  \tex.com/m/c\t0.003s\n"
	dirs := map[string]string{"ex.com/m/a": "/m/a", "ex.com/m/c": "/m/c"}
	got, err := parseList(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	want := []target{{"ex.com/m/a", "/m/a", "FuzzA"}, {"ex.com/m/a", "/m/a", "FuzzB"}, {"ex.com/m/c", "/m/c", "FuzzC"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(target{})); diff != "" {
		t.Errorf("parseList (-want +got):\n%s", diff)
	}
	if _, err := parseList("FuzzA\n", dirs); err == nil {
		t.Error("names with no package line after them were taken")
	}
}
