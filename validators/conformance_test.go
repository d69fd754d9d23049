package validators

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The formats' own conformance suites (DESIGN §20), kept under
// testdata/conformance with a SOURCE.md each. Every case goes through the
// check an answer goes through; a verdict that differs from the suite's
// fails the test unless known-differences.txt lists it with its reason,
// and a listed difference that no longer differs fails it too, so the list
// stays true.

const conformanceDir = "../testdata/conformance"

// The suites' names in known-differences.txt.
const (
	suiteJSONSchema = "JSON-Schema-Test-Suite"
	suiteJSON       = "JSONTestSuite"
)

// knownDifferences reads known-differences.txt: "SUITE<TAB>CASE<TAB>REASON"
// a line, '#' comments and blank lines skipped. It returns suite's entries,
// case → reason.
func knownDifferences(t *testing.T, suite string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(conformanceDir, "known-differences.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 3 || fields[0] == "" || fields[1] == "" || strings.TrimSpace(fields[2]) == "" {
			t.Fatalf("known-differences.txt:%d: want SUITE<TAB>CASE<TAB>REASON, got %q", n, line)
		}
		if fields[0] != suite {
			continue
		}
		if _, dup := known[fields[1]]; dup {
			t.Fatalf("known-differences.txt:%d: %s is listed twice", n, fields[1])
		}
		known[fields[1]] = fields[2]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

// caseSep joins a case's parts (file, group, test) into its name. An entry
// of known-differences.txt names one case or, by a shorter name, every case
// under it: a whole file or a whole group.
const caseSep = " > "

// differences tracks which listed differences were seen.
type differences struct {
	known map[string]string
	used  map[string]bool
}

func newDifferences(t *testing.T, suite string) *differences {
	return &differences{known: knownDifferences(t, suite), used: map[string]bool{}}
}

// listed reports whether name, or a case group holding it, is listed.
func (d *differences) listed(name string) bool {
	for n := name; ; {
		if _, ok := d.known[n]; ok {
			d.used[n] = true
			return true
		}
		i := strings.LastIndex(n, caseSep)
		if i < 0 {
			return false
		}
		n = n[:i]
	}
}

// stale fails the test for each listed difference of the suite that did
// not occur, so the list says only what is true.
func (d *differences) stale(t *testing.T, suite string, prefix string) {
	t.Helper()
	var names []string
	for n := range d.known {
		if strings.HasPrefix(n, prefix) && !d.used[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		t.Errorf("known-differences.txt lists %s\t%s, but coda agrees with the suite there: remove the line", suite, n)
	}
}

// A schemaGroup is one schema of JSON-Schema-Test-Suite and its cases.
type schemaGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// schemaSuiteFiles lists a draft's case files, the core ones and the
// optional format ones, as paths relative to the suite's directory.
func schemaSuiteFiles(t *testing.T, draft string) []string {
	t.Helper()
	root := filepath.Join(conformanceDir, suiteJSONSchema)
	var files []string
	for _, dir := range []string{draft, draft + "/optional/format"} {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if len(files) == 0 {
		t.Fatalf("no case files for %s under %s", draft, root)
	}
	return files
}

// schemaVerdict is coda's verdict on one case: the schema compiled as a
// spec with opts compiles it, the data decoded as a JSON answer is, and
// checked against it. "" is valid, anything else says why not.
func schemaVerdict(s *Schema, data json.RawMessage) string {
	v, err := Decode("json", string(data))
	if err != nil {
		return "the data does not decode: " + err.Error()
	}
	if vs := s.Validate(v); len(vs) > 0 {
		return FormatViolations(vs, 3)
	}
	return ""
}

// TestConformance_JSONSchema runs JSON-Schema-Test-Suite's core and
// optional/format cases of drafts 2020-12, 2019-09, 7 and 6 through
// CompileSchema and Schema.Validate, with format asserted (coda's
// default).
func TestConformance_JSONSchema(t *testing.T) {
	diffs := newDifferences(t, suiteJSONSchema)
	for _, draft := range []string{"draft2020-12", "draft2019-09", "draft7", "draft6"} {
		t.Run(draft, func(t *testing.T) {
			type tally struct{ cases, wrong, listed int }
			var core, format tally
			for _, file := range schemaSuiteFiles(t, draft) {
				at := &core
				if strings.Contains(file, "/optional/") {
					at = &format
				}
				c, w, l := runSchemaFile(t, diffs, file, SchemaOptions{})
				at.cases, at.wrong, at.listed = at.cases+c, at.wrong+w, at.listed+l
			}
			t.Logf("%s core: %d cases, %d wrong verdicts, %d of them listed in known-differences.txt", draft, core.cases, core.wrong, core.listed)
			t.Logf("%s optional/format: %d cases, %d wrong verdicts, %d of them listed", draft, format.cases, format.wrong, format.listed)
		})
	}
	diffs.stale(t, suiteJSONSchema, "")
}

// TestConformance_JSONSchemaFormatAnnotation holds the core format files,
// whose cases take format for an annotation, to assert_format = false:
// there they agree without exception.
func TestConformance_JSONSchemaFormatAnnotation(t *testing.T) {
	none := &differences{known: map[string]string{}, used: map[string]bool{}}
	for _, draft := range []string{"draft2020-12", "draft2019-09", "draft7", "draft6"} {
		runSchemaFile(t, none, draft+"/format.json", SchemaOptions{NoFormatAssertion: true})
	}
}

// dialects are the $schema of each draft's directory.
var dialects = map[string]string{
	"draft2020-12": "https://json-schema.org/draft/2020-12/schema",
	"draft2019-09": "https://json-schema.org/draft/2019-09/schema",
	"draft7":       "http://json-schema.org/draft-07/schema#",
	"draft6":       "http://json-schema.org/draft-06/schema#",
}

// inDialect gives a schema that names no $schema its directory's, as the
// suite asks of a runner (coda reads a schema without one as 2020-12). A
// boolean schema is the same in every draft, and stays as it is.
func inDialect(schema json.RawMessage, draft string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return schema
	}
	if _, ok := m["$schema"]; ok {
		return schema
	}
	d, _ := json.Marshal(dialects[draft])
	// The root's members kept as they are: only $schema is added.
	return json.RawMessage(`{"$schema":` + string(d) + `,` + strings.TrimPrefix(strings.TrimSpace(string(schema)), "{"))
}

// runSchemaFile checks every case of one file and returns how many cases
// it holds, how many verdicts differ from the suite's, and how many of
// those are listed.
func runSchemaFile(t *testing.T, diffs *differences, file string, opts SchemaOptions) (cases, wrong, listed int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, suiteJSONSchema, file))
	if err != nil {
		t.Fatal(err)
	}
	var groups []schemaGroup
	if err := json.Unmarshal(b, &groups); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	draft, _, _ := strings.Cut(file, "/")
	for _, g := range groups {
		s, cerr := CompileSchemaWith(inDialect(g.Schema, draft), opts)
		for _, tc := range g.Tests {
			cases++
			name := file + caseSep + g.Description + caseSep + tc.Description
			var why string
			switch {
			case cerr != nil:
				why = "the schema does not compile: " + cerr.Error()
			default:
				why = schemaVerdict(s, tc.Data)
				if (why == "") == tc.Valid {
					continue
				}
				if why == "" {
					why = "accepted"
				}
			}
			wrong++
			if diffs.listed(name) {
				listed++
				continue
			}
			t.Errorf("%s\t%s: the suite says valid=%v, coda says: %s\n  schema: %s\n  data: %s",
				suiteJSONSchema, name, tc.Valid, why, g.Schema, tc.Data)
		}
	}
	return cases, wrong, listed
}

// TestConformance_JSON runs JSONTestSuite's test_parsing cases through
// Check("json"), and Decode("json") must agree with it: y_ must be
// accepted, n_ refused; i_ is the parser's choice, and coda's is only
// logged.
func TestConformance_JSON(t *testing.T) {
	diffs := newDifferences(t, suiteJSON)
	dir := filepath.Join(conformanceDir, suiteJSON, "test_parsing")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cases, wrong, listed int
	var implementation []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		err = Check("json", string(b))
		// With a schema in effect, the answer is decoded instead (one
		// parse for both checks): the verdict must be the same.
		if _, derr := Decode("json", string(b)); (derr == nil) != (err == nil) {
			t.Errorf("test_parsing/%s: Check says %v, Decode says %v", name, err, derr)
		}
		switch name[0] {
		case 'i':
			verdict := "accepted"
			if err != nil {
				verdict = "refused"
			}
			implementation = append(implementation, name+" "+verdict)
			continue
		case 'y':
			if err == nil {
				cases++
				continue
			}
		case 'n':
			if err != nil {
				cases++
				continue
			}
		default:
			t.Fatalf("%s: a case file's name starts with y_, n_ or i_", name)
		}
		cases++
		wrong++
		if diffs.listed("test_parsing/" + name) {
			listed++
			continue
		}
		verdict := "accepted"
		if err != nil {
			verdict = fmt.Sprintf("refused (%v)", err)
		}
		t.Errorf("%s\ttest_parsing/%s: coda %s, the suite says %s", suiteJSON, name, verdict, map[byte]string{'y': "accept", 'n': "refuse"}[name[0]])
	}
	t.Logf("JSONTestSuite: %d y_/n_ cases, %d wrong verdicts, %d of them listed in known-differences.txt", cases, wrong, listed)
	t.Logf("i_ cases, the parser's choice: %s", strings.Join(implementation, ", "))
	diffs.stale(t, suiteJSON, "")
}
