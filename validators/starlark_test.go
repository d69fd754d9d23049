package validators

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// setTopLevel sets the limits of a validator's top level for one test.
func setTopLevel(tb testing.TB, steps uint64, timeout time.Duration, memory uint64) {
	saved := topLevel
	topLevel.steps, topLevel.timeout, topLevel.memory = steps, timeout, memory
	tb.Cleanup(func() { topLevel = saved })
}

func TestCompileValidator_Errors(t *testing.T) {
	// The step budget decides, not the machine's speed: 20 million steps
	// take longer than the 5 s guard under -race on a busy machine.
	setTopLevel(t, 100_000, time.Hour, 0)
	for _, tc := range []struct{ name, src, want string }{
		{"undefined name", "def validate(content):\n    return foo(content)\n", "x.star:2:12: undefined: foo"},
		{"several errors", "def validate(content):\n    return foo + bar\n", "x.star:2:12: undefined: foo (and 1 more error)"},
		{"syntax error", "def validate(content)\n    return None\n", "x.star:2:1: got newline, want ':'"},
		{"two parameters", "def validate(content, extra):\n    return None\n", "x.star:1:1: validate must take exactly 1 parameter (content), it takes 2"},
		{"no parameter", "def validate():\n    return None\n", "x.star:1:1: validate must take exactly 1 parameter (content), it takes 0"},
		{"varargs", "def validate(*content):\n    return None\n", "x.star:1:1: validate must take exactly 1 parameter (content), not *args or **kwargs"},
		{"missing validate", "def check(content):\n    return None\n", "x.star: no validate function: a validator defines def validate(content)"},
		{"validate not a function", "validate = 3\n", "x.star: validate is a int, not a function"},
		{"load", "load('lib.star', 'f')\ndef validate(content):\n    return None\n", "x.star:1:6: load is not available in validators"},
		{"top level fails", "x = {}['k']\ndef validate(content):\n    return None\n", `x.star:1:7: key "k" not in dict`},
		{"top level loops", "while True:\n    pass\ndef validate(content):\n    return None\n", "exceeded its budget"},
		{"no I/O", "def validate(content):\n    return open('/etc/passwd')\n", "x.star:2:12: undefined: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileValidator("x.star", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CompileValidator = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestLoadValidator(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.star")
	if err := os.WriteFile(good, []byte("def validate(content):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := LoadValidator(good)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name() != good {
		t.Errorf("Name() = %q", v.Name())
	}
	bad := filepath.Join(dir, "bad.star")
	if err := os.WriteFile(bad, []byte("def validate(content):\n    return nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.star"): filepath.Join(dir, "missing.star") + ": no such file or directory",
		filepath.Join(dir, "check.rhai"):   "validators are Starlark (.star): " + filepath.Join(dir, "check.rhai") + " is a Rhai script",
		filepath.Join(dir, "CHECK.RHAI"):   "is a Rhai script",
		bad:                                bad + ":2:12: undefined: nope",
	} {
		if _, err := LoadValidator(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadValidator(%s) = %v, want %q", path, err, want)
		}
	}
}

func compile(t *testing.T, src string) *Validator {
	t.Helper()
	v, err := CompileValidator("t.star", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidator_Validate(t *testing.T) {
	for _, tc := range []struct {
		name, src, content string
		reason             string // the verdict when the validator works
		broken             string // a fragment of the ScriptError otherwise
	}{
		{"None accepts", "def validate(content):\n    return None\n", "x", "", ""},
		{"falling off the end accepts", "def validate(content):\n    pass\n", "x", "", ""},
		{"empty string accepts", "def validate(content):\n    return ''\n", "x", "", ""},
		{"a string rejects", "def validate(content):\n    if 'TODO' in content:\n        return 'remove the TODO'\n", "a TODO here", "remove the TODO", ""},
		{"another type is broken", "def validate(content):\n    return 42\n", "x", "", "t.star:1:1: validate returned int 42, want None (the answer is fine) or a string (why it is not)"},
		{"False is broken", "def validate(content):\n    return False\n", "x", "", "validate returned bool False"},
		{"a long value is shortened at a character", "def validate(content):\n    return ['a' + 'é' * 30]\n", "x", "", `validate returned list ["a` + strings.Repeat("é", 18) + "…, want None"},
		{"a failure is broken", "def validate(content):\n    fail('no idea')\n", "x", "", "t.star:2:9: in validate: fail: no idea"},
		{"an error in a helper function", "def get(d):\n    return d['id']\ndef validate(content):\n    return get(parse_json(content))\n", `{"a": 1}`, "", `t.star:2:13: in get: key "id" not in dict`},
		{"an endless loop is broken", "def validate(content):\n    n = 0\n    while True:\n        n += 1\n", "x", "", "the validator exceeded its budget of 20000000 execution steps"},
		{"endless recursion is broken", "def f(n):\n    return f(n + 1)\ndef validate(content):\n    return f(0)\n", "x", "", "in f: the validator recursed deeper than 10000 calls (an endless recursion?)"},
		{"frozen globals", "SEEN = []\ndef validate(content):\n    SEEN.append(content)\n", "x", "", "cannot append to frozen list"},
		{"parse failure is broken", "def validate(content):\n    parse_json(content)\n", "{\"a\": [1,", "", "t.star:2:15: in validate: parse_json: line 1, column 10: the JSON ends before the [ opened"},
		{"parse default", "def validate(content):\n    if parse_json(content, default = None) == None:\n        return 'not JSON'\n", "nope", "not JSON", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := compile(t, tc.src)
			// The budgets decide, not the machine's speed: the wall-clock
			// guard (TestValidator_Limits tests it) is out of the way.
			v.Timeout = time.Hour
			start := time.Now()
			reason, err := v.Validate(context.Background(), tc.content)
			// A hang detector, not a speed test.
			if elapsed := time.Since(start); elapsed > time.Minute {
				t.Errorf("took %v: the budget did not stop the script", elapsed)
			}
			if tc.broken == "" {
				if err != nil || reason != tc.reason {
					t.Fatalf("Validate = %q, %v; want %q, nil", reason, err, tc.reason)
				}
				return
			}
			var se *ScriptError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, tc.broken) {
				t.Fatalf("Validate = %q, %v; want a ScriptError containing %q", reason, err, tc.broken)
			}
			if reason != "" || strings.Contains(se.Msg, "\n") {
				t.Errorf("reason %q, message %q", reason, se.Msg)
			}
		})
	}
}

func TestValidator_Print(t *testing.T) {
	v := compile(t, "def validate(content):\n    print('looking at', len(content))\n    fail('stop')\n")
	_, err := v.Validate(context.Background(), "abc")
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("Validate = %v", err)
	}
	if se.Output != "looking at 3" {
		t.Errorf("Output = %q", se.Output)
	}
	if !strings.Contains(se.Backtrace, "validate") {
		t.Errorf("Backtrace = %q", se.Backtrace)
	}
}

func TestValidator_Limits(t *testing.T) {
	loop := "def validate(content):\n    while True:\n        pass\n"

	v := compile(t, loop)
	v.MaxSteps = 1000
	_, err := v.Validate(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "budget of 1000 execution steps") {
		t.Errorf("small budget: %v", err)
	}

	v = compile(t, loop)
	v.MaxSteps = 1 << 62
	v.Timeout = 50 * time.Millisecond
	start := time.Now()
	_, err = v.Validate(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "ran longer than 50ms") {
		t.Errorf("timeout: %v", err)
	}
	if d := time.Since(start); d > time.Minute { // a hang detector: the guard fired, not the test timeout
		t.Errorf("the wall-clock guard took %v", d)
	}

	v = compile(t, loop)
	v.MaxSteps = 1 << 62
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = v.Validate(ctx, "x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled context: %v, want it to wrap context.DeadlineExceeded", err)
	}
	var se *ScriptError
	if errors.As(err, &se) {
		t.Errorf("a cancelled call is not a broken validator: %v", err)
	}
}

func TestValidator_Concurrent(t *testing.T) {
	v := compile(t, "LIMIT = 3\ndef validate(content):\n    rows = parse_csv(content)\n    if len(rows) > LIMIT:\n        return 'too many rows: %d' % len(rows)\n")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			content := strings.Repeat("a,b\n", i+1)
			reason, err := v.Validate(context.Background(), content)
			if err != nil || (i+1 > 3) != (reason != "") {
				t.Errorf("rows %d: %q, %v", i+1, reason, err)
			}
		}()
	}
	wg.Wait()
}

// TestHelpers runs each helper from a script that returns what it parsed,
// encoded as JSON (which sorts keys), so the test sees the exact Starlark
// values; the order cases list keys to see the order.
func TestHelpers(t *testing.T) {
	for _, tc := range []struct{ name, expr, content, want string }{
		{"parse_json keeps order and types", "parse_json(content)", `{"z": 1, "a": [1.5, true, null, "s"], "big": 12345678901234567890}`,
			`{"a":[1.5,true,null,"s"],"big":12345678901234567890,"z":1}`},
		{"parse_yaml keeps order, string keys", "parse_yaml(content)", "z: 1\n1: one\nd: 2024-01-02\nl: [a, 2]\n",
			`{"1":"one","d":"2024-01-02","l":["a",2],"z":1}`},
		{"parse_yaml scalar", "parse_yaml(content)", "just words", `"just words"`},
		{"parse_toml", "parse_toml(content)", "z = 1\nd = 2024-01-02\n[t]\nx = 1.5\n",
			`{"d":"2024-01-02","t":{"x":1.5},"z":1}`},
		{"parse_csv", "parse_csv(content)", "a,b\n\"x, y\",2\nragged\n", `[["a","b"],["x, y","2"],["ragged"]]`},
		{"parse_xml", "parse_xml(content)",
			`<r xmlns:p="urn:p" a="1" p:b="2"> <f sev="high"> text <![CDATA[<x>]]> </f><g/>tail</r>`,
			`{"attrs":{"a":"1","xmlns:p":"urn:p","{urn:p}b":"2"},"children":[` +
				`{"attrs":{"sev":"high"},"children":[],"ns":"","tag":"f","text":"text <x>"},` +
				`{"attrs":{},"children":[],"ns":"","tag":"g","text":""}],"ns":"","tag":"r","text":"tail"}`},
		{"parse_json order", "list(parse_json(content).keys())", `{"z": 1, "a": 2, "m": 3}`, `["z","a","m"]`},
		{"parse_yaml order", "list(parse_yaml(content).keys())", "z: 1\na: 2\nm: 3\n", `["z","a","m"]`},
		{"parse_xml order", "[list(parse_xml(content).keys()), list(parse_xml(content)['attrs'].keys())]", `<r z="1" a="2"/>`,
			`[["tag","ns","attrs","text","children"],["z","a"]]`},
		{"parse_xml namespace", "parse_xml(content)['ns']", `<r xmlns="urn:a"/>`, `"urn:a"`},
		{"parse_xml entity", "parse_xml(content)['text']", `<!DOCTYPE r [<!ENTITY who "world">]><r>hello &who;</r>`, `"hello world"`},
		{"default", "[parse_json(content, default=1), parse_yaml('a: [', default=2), parse_toml('a =', default=3), parse_csv('\"', default=4), parse_xml('<a>', default=5)]",
			"{", `[1,2,3,4,5]`},
		{"json module", "json.decode(json.encode({'a': [1]}))", "", `{"a":[1]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := compile(t, "def validate(content):\n    return json.encode("+tc.expr+")\n")
			got, err := v.Validate(context.Background(), tc.content)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestHelpers_Errors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"parse_json('{\"a\" 1}')", "parse_json: line 1, column 6: invalid character '1' after object key"},
		{"parse_json('{\"a\": 1, \"a\": 2}')", "parse_json: line 1, column 10: the key /a appears twice in one object"},
		{"parse_yaml('a: [1')", "parse_yaml: line 1, column 4: sequence end token ']' not found"},
		{"parse_toml('a = ')", "parse_toml: line 1, column 4: unexpected EOF; expected value"},
		{"parse_csv('a\\n\"b')", "parse_csv: line 2: a quoted field opened on this line is never closed"},
		{"parse_xml('<a></b>')", "parse_xml: line 1, column 4: element <a> closed by </b>"},
		{"parse_xml('<a/><b/>')", "parse_xml: line 1, column 5: a second root element <b>"},
		{"parse_json(1)", "parse_json: for parameter text: got int, want string"},
	} {
		v := compile(t, "def validate(content):\n    "+tc.expr+"\n")
		_, err := v.Validate(context.Background(), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.expr, err, tc.want)
		}
	}
}
