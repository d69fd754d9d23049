package validators

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The formats' own conformance suites, run through coda's checks (issue
// 30). Each suite lives under ../testdata/conformance/<suite>/ with its
// SOURCE.md; every case goes through Check (and Decode, where the suite
// gives the data), the path an answer takes. A case where coda and the
// suite disagree fails the test unless known-differences.txt lists it with
// its reason, and a line there that no longer differs fails it too.

// A suiteCase is one case of a suite, judged: what coda's verdict is and
// whether the suite agrees.
type suiteCase struct {
	name string
	// differs is "" when coda agrees with the suite, else what differs:
	// "accepted", "refused: <message>", "data: <diff>".
	differs string
}

// holdToSuite fails t on every difference not listed, and on every listed
// case that agrees or is not in the suite. It logs the tally the issue's
// table reports.
func holdToSuite(t *testing.T, suite string, cases []suiteCase) {
	t.Helper()
	known := knownDifferences(t, suite)
	seen := map[string]bool{}
	differ := 0
	for _, c := range cases {
		seen[c.name] = true
		reason, listed := known[c.name]
		switch {
		case c.differs != "" && !listed:
			t.Errorf("%s %s: %s", suite, c.name, c.differs)
		case c.differs == "" && listed:
			t.Errorf("%s %s: agrees with the suite, but known-differences.txt lists it (%s): remove the line", suite, c.name, reason)
		}
		if c.differs != "" {
			differ++
		}
	}
	for name := range known {
		if !seen[name] {
			t.Errorf("known-differences.txt lists %s %s, which the suite does not have", suite, name)
		}
	}
	t.Logf("%s: %d cases, %d differ from the suite (%d listed as deliberate)", suite, len(cases), differ, len(known))
}

// verdict words Check's result against what the suite expects.
func verdict(err error, valid bool) string {
	switch {
	case err == nil && !valid:
		return "accepted, but the suite says it is invalid"
	case err != nil && valid:
		return "refused, but the suite says it is valid: " + err.Error()
	}
	return ""
}

func TestConformance_XML(t *testing.T) {
	root := filepath.Join(conformanceDir, "xmltest")
	var cases []suiteCase
	for _, dir := range []string{"not-wf/sa", "valid/sa"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.xml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no cases in %s: %v", dir, err)
		}
		for _, file := range files {
			name := dir + "/" + filepath.Base(file)
			switch name {
			case "valid/sa/049.xml", "valid/sa/050.xml", "valid/sa/051.xml":
				continue // UTF-16: an answer is text, never UTF-16 bytes
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, suiteCase{name, verdict(Check("xml", string(b)), dir == "valid/sa")})
		}
	}
	holdToSuite(t, "xmltest", cases)
}

func TestConformance_TOML(t *testing.T) {
	root := filepath.Join(conformanceDir, "toml-test")
	list, err := os.ReadFile(filepath.Join(root, "files-toml-1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []suiteCase
	for _, name := range strings.Fields(string(list)) {
		if !strings.HasSuffix(name, ".toml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		valid := strings.HasPrefix(name, "valid/")
		c := suiteCase{name: name}
		c.differs = verdict(Check("toml", string(b)), valid)
		if valid && c.differs == "" {
			tagged, err := os.ReadFile(filepath.Join(root, strings.TrimSuffix(name, ".toml")+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var w any
			if err := json.Unmarshal(tagged, &w); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := Decode("toml", string(b))
			if err != nil {
				c.differs = "Check accepts it, Decode refuses it: " + err.Error()
			} else if d := dataDiff(got, untag(w), ""); d != "" {
				c.differs = "data: " + d
			}
		}
		cases = append(cases, c)
	}
	if len(cases) != 709 {
		t.Errorf("%d TOML 1.0 cases, want 709", len(cases))
	}
	holdToSuite(t, "toml-test", cases)
}

// untag turns toml-test's tagged JSON ({"type": "integer", "value": "1"})
// into the JSON-like values Decode gives.
func untag(v any) any {
	switch v := v.(type) {
	case []any:
		for i, x := range v {
			v[i] = untag(x)
		}
		return v
	case map[string]any:
		typ, tok := v["type"].(string)
		val, vok := v["value"].(string)
		if len(v) == 2 && tok && vok {
			switch typ {
			case "integer":
				n, _ := strconv.ParseInt(val, 10, 64)
				return n
			case "float":
				switch val {
				case "inf", "+inf":
					return math.Inf(1)
				case "-inf":
					return math.Inf(-1)
				case "nan", "+nan", "-nan":
					return math.NaN()
				}
				f, _ := strconv.ParseFloat(val, 64)
				return f
			case "bool":
				return val == "true"
			case "datetime", "datetime-local", "date-local", "time-local":
				return tomlTime(val)
			}
			return val
		}
		for k, x := range v {
			v[k] = untag(x)
		}
		return v
	}
	return v
}

// A tomlTime is a date or time as toml-test writes it, equal to Decode's
// string for the same instant or local time whatever the precision shown.
type tomlTime string

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", time.DateOnly, "15:04:05.999999999"}

func parseAnyTime(s string) (time.Time, bool) {
	s = strings.Replace(strings.ToUpper(s), " ", "T", 1)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// dataDiff describes the first difference between Decode's data and the
// suite's, or "".
func dataDiff(got, want any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %T, want an object", at, got)
		}
		for k := range w {
			if _, ok := g[k]; !ok {
				return fmt.Sprintf("%s: key %q is missing", at, k)
			}
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range g {
				if !yield(k) {
					return
				}
			}
		}) {
			x, ok := w[k]
			if !ok {
				return fmt.Sprintf("%s: key %q is not in the suite's data", at, k)
			}
			if d := dataDiff(g[k], x, at+"/"+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %#v, want %d items", at, got, len(w))
		}
		for i := range w {
			if d := dataDiff(g[i], w[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
				return d
			}
		}
		return ""
	case tomlTime:
		g, _ := got.(string)
		gt, gok := parseAnyTime(g)
		wt, wok := parseAnyTime(string(w))
		if g == string(w) || gok && wok && gt.Equal(wt) {
			return ""
		}
		return fmt.Sprintf("%s: %q, want %q", at, g, w)
	case float64, int64, json.Number:
		gf, gok := number(got)
		wf, _ := number(w)
		if gok && (gf == wf || math.IsNaN(gf) && math.IsNaN(wf)) {
			return ""
		}
		return fmt.Sprintf("%s: %#v, want %v", at, got, w)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%s: %#v, want %#v", at, got, want)
	}
	return ""
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

func TestConformance_YAML(t *testing.T) {
	root := filepath.Join(conformanceDir, "yaml-test-suite")
	var cases []suiteCase
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "in.yaml" {
			return err
		}
		dir := filepath.Dir(path)
		name, _ := filepath.Rel(root, dir)
		name = filepath.ToSlash(name)
		in, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, statErr := os.Stat(filepath.Join(dir, "error"))
		valid := errors.Is(statErr, os.ErrNotExist)
		c := suiteCase{name: name, differs: verdict(Check("yaml", string(in)), valid)}
		if js, err := os.ReadFile(filepath.Join(dir, "in.json")); valid && c.differs == "" && err == nil {
			dec := json.NewDecoder(strings.NewReader(string(js)))
			dec.UseNumber()
			var w any
			if err := dec.Decode(&w); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			got, err := Decode("yaml", string(in))
			if err != nil {
				c.differs = "Check accepts it, Decode refuses it: " + err.Error()
			} else if d := dataDiff(got, w, ""); d != "" {
				c.differs = "data: " + d
			}
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 402 {
		t.Errorf("%d YAML cases, want 402", len(cases))
	}
	holdToSuite(t, "yaml-test-suite", cases)
}

func TestConformance_Markdown(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(conformanceDir, "commonmark", "spec.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "```````````````````````````````` example", "````````````````````````````````"
	var cases []suiteCase
	var md strings.Builder
	state := 0 // 0 outside an example, 1 in its Markdown, 2 in its HTML
	for line := range strings.Lines(string(spec)) {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case state == 0 && strings.HasPrefix(trimmed, open):
			state = 1
			md.Reset()
		case state == 1 && trimmed == ".":
			state = 2
		case state == 1:
			md.WriteString(strings.ReplaceAll(line, "→", "\t"))
		case state == 2 && trimmed == end:
			state = 0
			name := fmt.Sprintf("example %d", len(cases)+1)
			cases = append(cases, suiteCase{name, verdict(Check("markdown", md.String()), true)})
		}
	}
	if len(cases) != 655 {
		t.Errorf("%d CommonMark examples, want 655", len(cases))
	}
	holdToSuite(t, "commonmark", cases)
}
