package validators

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seeds are the table tests' answers, shared by every fuzzer.
var seeds = []string{
	"", " ", "{}", "[]", `{"a": 1}`, "```json\n{}\n```", "Here is the JSON:\n{}", `{"a": [1, 2`,
	`{"a": "x`, "<a/>", "<a><b x=\"1\" x=\"2\"/></a>", "<a>&nbsp;</a>", "<a></a><b/>", "<a>\n<b>",
	"a,b\n1,2\n", "a,b\n\"1,2\n", "a,b\n1\"x,2\n", "| a | b |\n|---|---|\n", "a: 1\nb: [x]\n", "- a\n- b\n",
	"---\na: 1\n---\nb: 2\n", "a: 1\na: 2\n", "just prose.", "a = 1\n[t]\nb = 2\n", "[[x]]\ny = 1979-05-27T07:32:00Z\n",
	"# T\n\n```go\nx\n```\n", "```\nx\n", "> ```\n> x\n", "- a\n  ```\n  b\n", "````\n```\n````\n",
	"\ufeff{}", "\x00", "{\"\\ud800\": 1}", strings.Repeat("[", 20000), strings.Repeat("- ", 5000) + "x",
	strings.Repeat("> ", 5000) + "```", "<" + strings.Repeat("a><", 3000) + "a/>",
	`{"a": 1, "a": 2}`, `{"a": [{"b": 1, "\u0062": 2}]}`, `[{"a": 1}, {"a": 1}]`, `{"s": "{\"b\":1,\"b\":2}"}`,
	yamlBomb(), "a: &a [1, 2]\nb: [*a, *a]\n", "a: &x [1, *x]\n", "Here you go:\nname: x\n", "Here is the JSON: {\"a\": 1}",
}

// checkInvariants holds for every format: Check never panics, fails with
// an *Error on one line whose position lies inside the content.
func checkInvariants(t *testing.T, format, content string) error {
	err := Check(format, content)
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Check(%s) returned %T: %v", format, err, err)
	}
	if e.Msg == "" || strings.ContainsAny(e.Msg, "\n\r") {
		t.Fatalf("Check(%s) message %q: empty or on several lines", format, e.Msg)
	}
	lines := strings.Count(content, "\n") + strings.Count(content, "\r") + 1 // a lone CR ends a YAML line
	if e.Line < 0 || e.Line > lines || e.Column < 0 || (e.Line == 0 && e.Column != 0) {
		t.Fatalf("Check(%s) position %d:%d outside the %d lines of %q", format, e.Line, e.Column, lines, content)
	}
	return err
}

func addSeeds(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
}

// duplicateKey is a second opinion on jsonDuplicateKey: encoding/json's
// tokens, each object's keys in a set.
func duplicateKey(s string) bool {
	d := json.NewDecoder(strings.NewReader(s))
	type object struct {
		keys   map[string]bool
		wanted bool // the next string token is a key
	}
	var stack []*object
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		key := top != nil && top.keys != nil && top.wanted
		switch tok := tok.(type) {
		case json.Delim:
			if key {
				return false // cannot be: a key is a string
			}
			if top != nil && top.keys != nil {
				top.wanted = true // the value ends where this container does
			}
			switch tok {
			case '{':
				stack = append(stack, &object{keys: map[string]bool{}, wanted: true})
			case '[':
				stack = append(stack, &object{})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if key {
				if top.keys[tok] {
					return true
				}
				top.keys[tok] = true
				top.wanted = false
				continue
			}
			if top != nil && top.keys != nil {
				top.wanted = true
			}
		default:
			if top != nil && top.keys != nil {
				top.wanted = true
			}
		}
	}
}

func FuzzCheckJSON(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		err := checkInvariants(t, "json", s)
		valid := json.Valid([]byte(s)) && !duplicateKey(s)
		if (err == nil) != valid {
			t.Fatalf("Check = %v but valid JSON without a duplicate key = %v", err, valid)
		}
		if err != nil && json.Valid([]byte(s)) && !strings.Contains(err.Error(), "appears twice") {
			t.Fatalf("valid JSON refused for another reason than a duplicate key: %v", err)
		}
		if err == nil {
			if _, err := Decode("json", s); err != nil {
				t.Fatalf("Check passes but Decode fails: %v", err)
			}
		}
	})
}

func FuzzCheckXML(f *testing.F) {
	addSeeds(f)
	for _, seed := range []string{
		"<!DOCTYPE r [<!ENTITY e \"<b a='&#60;'>x</b>\"><!ENTITY % p \"<!ENTITY q 'y'>\">%p;<!ELEMENT r (a|b)*><!ATTLIST r a CDATA #IMPLIED b (x|y) 'x'>]><r>&e;&q;</r>",
		"<?xml version=\"1.0\" standalone=\"yes\"?><!DOCTYPE r SYSTEM \"r.dtd\" [<!NOTATION n PUBLIC \"p\"><!ENTITY u SYSTEM \"u\" NDATA n>]><r a=\"1\" b='2'><![CDATA[x]]><?pi x?><!-- c --></r>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkInvariants(t, "xml", s) != nil {
			return
		}
		// What passes is well-formed for encoding/xml too, which is the
		// sanity corpus of coda's own scanner (xmlwf.go): but for a DOCTYPE,
		// whose entities encoding/xml does not know, and names beyond
		// ASCII, where encoding/xml keeps XML 1.0's first edition.
		if strings.Contains(s, "<!DOCTYPE") || !isASCII(s) {
			return
		}
		d := xml.NewDecoder(strings.NewReader(s))
		d.Strict = true
		d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Check passes but encoding/xml fails: %v", err)
			}
		}
	})
}

func FuzzCheckCSV(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkInvariants(t, "csv", s) })
}

func FuzzCheckYAML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if checkInvariants(t, "yaml", s) == nil {
			v, err := Decode("yaml", s)
			if err != nil {
				t.Fatalf("Check passes but Decode fails: %v", err)
			}
			switch v.(type) {
			case map[string]any, []any:
			default:
				t.Fatalf("Decode returned %T", v)
			}
			// What passes is bounded once its aliases are expanded: no
			// more values than it writes (at most one a byte) and the
			// aliases' share.
			if n := expanded(v, maxYAMLAliased+len(s)+1); n > maxYAMLAliased+len(s)+1 {
				t.Fatalf("the decoded answer holds more than %d values", n)
			}
		}
	})
}

// expanded counts the values in v, a shared one at each place it appears,
// stopping past limit.
func expanded(v any, limit int) int {
	n := 1
	var walk func(any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				n++
				walk(x)
			}
		case []any:
			for _, x := range v {
				n++
				walk(x)
			}
		}
	}
	walk(v)
	return n
}

func FuzzCheckTOML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if checkInvariants(t, "toml", s) == nil {
			if _, err := Decode("toml", s); err != nil {
				t.Fatalf("Check passes but Decode fails: %v", err)
			}
		}
	})
}

func FuzzCheckMarkdown(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { checkInvariants(t, "markdown", s) })
}

// FuzzStarlark compiles arbitrary scripts and runs them on arbitrary
// answers under a small budget: nothing panics, and no call outlives its
// guards. The shipped examples run on every well-formed answer of their
// format and must never break.
func FuzzStarlark(f *testing.F) {
	examples := map[string]string{"a2ui.star": "json", "csv_header.star": "csv", "xml_findings.star": "xml"}
	var shipped []*Validator
	var formats []string
	for file, format := range examples {
		src, err := os.ReadFile(filepath.Join("examples", file))
		if err != nil {
			f.Fatal(err)
		}
		v, err := CompileValidator(file, src)
		if err != nil {
			f.Fatal(err)
		}
		shipped = append(shipped, v)
		formats = append(formats, format)
		for _, s := range seeds[:8] {
			f.Add(string(src), s)
		}
	}
	for _, src := range []string{
		"def validate(content):\n    while True:\n        pass\n",
		"def validate(content):\n    return content * 1000\n",
		"def f(n):\n    return f(n)\ndef validate(content):\n    return f(1)\n",
		"def validate(content):\n    return str(parse_json(content, default=None))\n",
		"def validate(content):\n    x = parse_xml(content)\n    return x['tag']\n",
		"def validate(content):\n    return [r for r in parse_csv(content)]\n",
		"def validate(content):\n    return parse_yaml(content)\n",
		"def validate(content):\n    return parse_toml(content)\n",
		"def validate(content):\n    return 'x' * (1 << 29)\n",
		"def validate(content):\n    s = content\n    while True:\n        s += s\n",
		"def validate(content):\n    return str([[content] * 100] * 100)\n",
		"def validate(content):\n    l = [1, 2, 3]\n    l[len(l) - 1] += 1\n    return str(l[::-1]) + content.replace('a', 'bb')\n",
	} {
		for _, s := range seeds[:10] {
			f.Add(src, s)
		}
	}
	const budget = 200_000
	setTopLevel(f, budget, time.Second, 16<<20)
	f.Fuzz(func(t *testing.T, src, content string) {
		if len(content) > 1<<16 {
			return // the 256 KiB cap is outputspec's; keep the fuzzer fast
		}
		for i, v := range shipped {
			if Check(formats[i], content) != nil {
				continue
			}
			if _, err := v.Validate(context.Background(), content); err != nil {
				t.Fatalf("%s broke on well-formed %s %q: %v", v.Name(), formats[i], content, err)
			}
		}
		start := time.Now()
		v, err := CompileValidator("fuzz.star", []byte(src))
		if d := time.Since(start); d > time.Minute { // a hang detector
			t.Fatalf("compiling took %v, past its guards", d)
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n") {
				t.Fatalf("compile error on several lines: %q", err)
			}
			return
		}
		v.MaxSteps = budget
		v.Timeout = time.Second
		v.MaxMemory = 16 << 20 // keep the fuzzer's own heap small
		start = time.Now()
		reason, err := v.Validate(context.Background(), content)
		if d := time.Since(start); d > time.Minute { // a hang detector
			t.Fatalf("a call took %v, past its guards", d)
		}
		var se *ScriptError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("Validate error %T: %v", err, err)
		}
		if err != nil && reason != "" {
			t.Fatalf("both a reason and an error")
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzFormatScanners runs coda's own scanners (xmlwf.go, yaml_strict.go,
// toml_tables.go) on any text, the malformed included: they must end,
// without panicking, whatever they are given. Check reaches the TOML one
// only with documents the library parsed.
func FuzzFormatScanners(f *testing.F) {
	addSeeds(f)
	for _, seed := range []string{
		"<!DOCTYPE r [<!ENTITY e \"<b a='&#60;'>x</b>\"><!ENTITY % p \"<!ENTITY q 'y'>\">%p;<!ELEMENT r (a|b)*><!ATTLIST r a CDATA #IMPLIED>]><r>&e;&q;</r>",
		"a = { b.c = [1, {d = \"\\u0041\"}], '' = 2 }\n[[t.u]]\n\"k\".v = 1979-05-27T07:32:00+01:00\n",
		"k: [a, \"b\"]\n? - c\n: &x !t |\n  text\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = xmlWellFormed(s)
		_ = yamlScan(s)
		_, _ = tomlTables(s)
	})
}
