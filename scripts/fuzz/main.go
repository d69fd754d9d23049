// Command fuzz runs every fuzz target of the packages it is given, each for
// a time budget, as CI does:
//
//	go run ./scripts/fuzz [-fuzztime 20s] [-match RE] [packages]   (default ./...)
//
// The targets are found with go test -list, so a new Fuzz function is
// fuzzed without being listed anywhere. FUZZTIME in the environment sets the
// default budget; a count such as 5000x works too.
//
// Go 1.26's fuzzing coordinator can report its own -fuzztime deadline as a
// failure of the target (go.dev/issue/75804, fixed in Go 1.27): when the
// deadline's context is cancelled, the coordinator may read the parent's
// error before the child's and take "context deadline exceeded" for an
// error of the run. That failure has one shape, which this command accepts
// as the pass it is: the target's only complaint is that line, printed once
// the budget is spent, no failing input is reported, and no file appeared
// in the target's testdata/fuzz directory. Any other failure fails.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	budget := flag.String("fuzztime", cmp.Or(os.Getenv("FUZZTIME"), "20s"), "each target's budget: a duration, or a count of inputs such as 5000x")
	match := flag.String("match", ".", "fuzz only the targets whose names match this regular expression")
	list := flag.Bool("list", false, "list the targets and stop")
	flag.Parse()
	re, err := regexp.Compile(*match)
	if err != nil {
		fatal("-match: %v", err)
	}
	limit, err := parseBudget(*budget)
	if err != nil {
		fatal("-fuzztime: %v", err)
	}
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	targets, err := findTargets(pkgs)
	if err != nil {
		fatal("finding the fuzz targets: %v", err)
	}
	var failed []string
	n := 0
	for _, t := range targets {
		if !re.MatchString(t.name) {
			continue
		}
		n++
		if *list {
			fmt.Printf("%s %s\n", t.pkg, t.name)
			continue
		}
		if err := t.fuzz(*budget, limit); err != nil {
			fmt.Fprintf(os.Stderr, "fuzz: %s %s: %v\n", t.pkg, t.name, err)
			failed = append(failed, t.name)
		}
	}
	if n == 0 {
		fatal("no fuzz target in %s matches %q", strings.Join(pkgs, " "), *match)
	}
	if len(failed) > 0 {
		fatal("%d of %d targets failed: %s", len(failed), n, strings.Join(failed, ", "))
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fuzz: "+format+"\n", args...)
	os.Exit(1)
}

// parseBudget reads -fuzztime as go test does: a duration, or a count of
// inputs ("5000x", which has no deadline: limit is then 0).
func parseBudget(s string) (limit time.Duration, err error) {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if c, err := strconv.Atoi(n); err != nil || c <= 0 {
			return 0, fmt.Errorf("%q is not a count of inputs", s)
		}
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

// A target is one fuzz function of one package.
type target struct {
	pkg, dir, name string
}

// findTargets lists the fuzz functions of pkgs, in package order.
func findTargets(pkgs []string) ([]target, error) {
	dirs := map[string]string{}
	out, err := goCmd(append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, pkgs...)...)
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(out) {
		if pkg, dir, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			dirs[pkg] = dir
		}
	}
	out, err = goCmd(append([]string{"test", "-list", "^Fuzz"}, pkgs...)...)
	if err != nil {
		return nil, err
	}
	return parseList(out, dirs)
}

// parseList reads go test -list's output: each package's names, then its
// "ok  pkg  0.01s" line.
func parseList(out string, dirs map[string]string) ([]target, error) {
	var all, names []string
	var targets []target
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && strings.HasPrefix(f[0], "Fuzz"):
			names = append(names, f[0])
		case len(f) >= 2 && (f[0] == "ok" || f[0] == "?"):
			for _, n := range names {
				targets = append(targets, target{pkg: f[1], dir: dirs[f[1]], name: n})
			}
			names = nil
		case len(f) > 0:
			all = append(all, strings.TrimSpace(line))
		}
	}
	if len(names) > 0 {
		return nil, fmt.Errorf("go test -list ended without naming the package of %s (%s)", strings.Join(names, ", "), strings.Join(all, "; "))
	}
	return targets, nil
}

func goCmd(args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out), nil
}

// fuzz runs the target for its budget, its output shown as it comes.
func (t target) fuzz(budget string, limit time.Duration) error {
	corpus := filepath.Join(t.dir, "testdata", "fuzz", t.name)
	before := entries(corpus)
	// The test binary's own timeout must outlast the budget: a target whose
	// seeds are slow would otherwise be killed as hung.
	timeout := max(limit, time.Minute) + 10*time.Minute
	cmd := exec.Command("go", "test", "-run", "^$", "-fuzz", "^"+t.name+"$", "-fuzztime", budget, "-timeout", timeout.String(), t.pkg)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &out)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return err // go did not run
	}
	return judge(t.name, err, out.String(), limit, newEntries(before, entries(corpus)))
}

// judge decides a run: err is how go test exited, out what it printed,
// limit the -fuzztime deadline (0 for a count), added the files that
// appeared in the target's corpus directory.
func judge(name string, err error, out string, limit time.Duration, added []string) error {
	if err == nil {
		return nil
	}
	if len(added) > 0 {
		return fmt.Errorf("%v; failing input written to testdata/fuzz/%s/%s", err, name, strings.Join(added, ", "))
	}
	if limit > 0 && coordinatorDeadline(name, out, limit) {
		fmt.Fprintf(os.Stderr, "fuzz: %s: the coordinator reported its own %v deadline as a failure, with no failing input (go.dev/issue/75804): passed\n", name, limit)
		return nil
	}
	return err
}

// coordinatorDeadline reports whether out is the failure of go.dev/issue/75804
// and nothing else: the target fails, once its budget is spent, with the one
// line "context deadline exceeded", and no input is reported failing.
func coordinatorDeadline(name, out string, limit time.Duration) bool {
	if strings.Contains(out, "Failing input written to") || strings.Contains(out, "panic:") {
		return false
	}
	head := regexp.MustCompile(`^--- FAIL: ` + regexp.QuoteMeta(name) + ` \(([0-9.]+)s\)$`)
	var fails int
	var deadline bool
	var elapsed time.Duration
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "--- FAIL:") {
			fails++
		}
		m := head.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		secs, _ := strconv.ParseFloat(m[1], 64)
		elapsed = time.Duration(secs * float64(time.Second))
		// What the target printed on failing: the one line, and then
		// nothing until the package's FAIL.
		var said []string
		for sc.Scan() {
			l := sc.Text()
			if l == "FAIL" || strings.HasPrefix(l, "exit status ") || strings.HasPrefix(l, "FAIL\t") {
				break
			}
			if s := strings.TrimSpace(l); s != "" {
				said = append(said, s)
			}
		}
		deadline = len(said) == 1 && said[0] == "context deadline exceeded"
		break
	}
	// The deadline is spent by then (the run's time counts the seeds too;
	// the slack is the printed time's rounding).
	return deadline && fails == 1 && elapsed+10*time.Millisecond >= limit
}

// entries lists the files of a corpus directory (none when it is absent).
func entries(dir string) map[string]bool {
	m := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

func newEntries(before, after map[string]bool) []string {
	var added []string
	for n := range after {
		if !before[n] {
			added = append(added, n)
		}
	}
	slices.Sort(added)
	return added
}
