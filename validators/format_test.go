package validators

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// want describes an expected Check failure: the position (-1: any) and a
// fragment of the message. The zero want means the answer passes.
type want struct {
	line, col int
	msg       string
}

var ok = want{}

func fails(line, col int, msg string) want { return want{line, col, msg} }

type checkCase struct {
	name    string
	content string
	want    want
}

func runChecks(t *testing.T, format string, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(format, tc.content)
			if tc.want == ok {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", format, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%s) = nil, want an error containing %q", format, tc.want.msg)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check(%s) returned %T, want *Error", format, err)
			}
			if !strings.Contains(e.Msg, tc.want.msg) {
				t.Errorf("message %q does not contain %q", e.Msg, tc.want.msg)
			}
			if tc.want.line >= 0 && e.Line != tc.want.line {
				t.Errorf("line = %d, want %d (%v)", e.Line, tc.want.line, err)
			}
			if tc.want.col >= 0 && e.Column != tc.want.col {
				t.Errorf("column = %d, want %d (%v)", e.Column, tc.want.col, err)
			}
			if strings.Contains(e.Msg, "\n") {
				t.Errorf("message spans lines: %q", e.Msg)
			}
		})
	}
}

// cut truncates s in the middle, as a cap would.
func cut(s string) string { return s[:len(s)/2] }

// truncateAfter cuts s just after the last occurrence of sep in its first
// half.
func truncateAfter(s, sep string) string {
	i := strings.LastIndex(s[:len(s)/2], sep)
	return s[:i+len(sep)]
}

func TestCheck_JSON(t *testing.T) {
	runChecks(t, "json", []checkCase{
		{"object", `{"a": 1, "b": [true, null, "x"]}`, ok},
		{"array", `[1, 2.5, -3e4]`, ok},
		{"scalar string", `"just a string"`, ok},
		{"surrounding space", "\n  {\"a\": 1}\n\n", ok},
		{"fenced", "```json\n{\"a\": 1}\n```", fails(1, 0, "wrapped in a ``` code fence: submit the JSON value alone")},
		{"fenced after blank lines", "\n\n```\n{\"a\": 1}\n```\n", fails(3, 0, "wrapped in a ``` code fence")},
		{"tilde fence", "~~~json\n{\"a\": 1}\n~~~", fails(1, 0, "wrapped in a ~~~ code fence")},
		{"preamble", "Here is the JSON:\n{\"a\": 1}", fails(1, 0, `starts with text before the JSON value ("Here is the JSON:")`)},
		{"preamble and fence", "Sure! Here it is:\n```json\n{\"a\": 1}\n```", fails(1, 0, "wraps the JSON value in a ``` code fence (line 2)")},
		{"xml given", "<result><a>1</a></result>", fails(1, 0, "this is XML, but the answer must be JSON")},
		{"yaml given", "name: bob\nage: 3\n", fails(1, 1, "this is YAML, but the answer must be JSON")},
		{"toml given", "[server]\nhost = \"x\"\n", fails(1, 1, "this is TOML, but the answer must be JSON")},
		{"prose", "I could not find any issues.", fails(1, 1, `the answer is not JSON: it starts with "I could not find any issues."`)},
		{"truncated object", `{"a": 1, "b": [1, 2`, fails(1, 20, "the [ opened at line 1, column 15 is closed (2 brackets are open in all): was the answer cut off?")},
		{"truncated string", `{"a": "abc`, fails(1, 11, "ends inside the string opened at line 1, column 7")},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"blank", " \n\t\n", fails(0, 0, "the answer is empty")},
		{"two values", `{"a": 1} {"b": 2}`, fails(1, 10, "a second JSON value starts here")},
		{"text after", "{\"a\": 1}\nLet me know if you need more.", fails(2, 1, `there is text after the JSON value ("Let me know if you need more.")`)},
		{"syntax error", "{\"a\": 1,\n \"b\": }", fails(2, 7, "invalid character '}' looking for beginning of value")},
		{"missing colon", `{"a" 1}`, fails(1, 6, "invalid character '1' after object key")},
		{"column counts characters", `{"é": "ü" x}`, fails(1, 11, "invalid character 'x'")},
		{"huge", bigJSON(answerCap), ok},
		{"huge truncated", cut(bigJSON(answerCap)), fails(-1, -1, "was the answer cut off?")},
	})
}

func TestCheck_JSONDuplicateKeys(t *testing.T) {
	many := `{` // 40 keys, then the 7th again: past the small-object path
	for i := range 40 {
		many += fmt.Sprintf(`"k%d": %d, `, i, i)
	}
	many += `"k7": 0}`
	runChecks(t, "json", []checkCase{
		{"a key twice", `{"a": 1, "a": 2}`, fails(1, 10, "the key /a appears twice in one object (first at line 1, column 2): give each key once")},
		{"named by its pointer", "{\"items\": [\n  {\"name\": \"x\"},\n  {\"name\": \"y\", \"id\": 2, \"name\": \"z\"}\n]}",
			fails(3, 26, "the key /items/1/name appears twice in one object (first at line 3, column 4)")},
		{"deep in objects", `{"a": {"b": {"c": 1, "d": 2, "c": 3}}}`, fails(1, 30, "the key /a/b/c appears twice")},
		{"escaped spelling of the same key", `{"a": 1, "\u0061": 2}`, fails(1, 10, "the key /a appears twice")},
		{"pointer escapes", `{"x/y~": 1, "x/y~": 2}`, fails(1, 13, "the key /x~1y~0 appears twice")},
		{"many keys", many, fails(1, -1, "the key /k7 appears twice")},
		{"after a nested object closes", `{"a": {"b": 1}, "c": [{"a": 1}], "a": 2}`, fails(1, 34, "the key /a appears twice")},
		{"the same key in sibling objects", `[{"a": 1}, {"a": 2}, {"a": {"a": 3}}]`, ok},
		{"values equal to keys", `{"a": "b", "b": "a", "c": ["a", "a"]}`, ok},
		{"keys inside a string", `{"s": "{\"b\": 1, \"b\": 2}"}`, ok},
		{"an empty key once", `{"": 1, "e": {"": 2}}`, ok},
		{"an empty key twice", `{"": 1, "": 2}`, fails(1, 9, "the key / appears twice")},
		// encoding/json reads each byte that is not UTF-8 as U+FFFD, so
		// these are one key, and one value would silently be lost.
		{"two keys of bytes that are not UTF-8", "{\"\xff\": 1, \"\xfe\": 2}", fails(1, -1, "the key /\ufffd appears twice")},
		{"a byte that is not UTF-8 and U+FFFD escaped", "{\"a\xff\": 1, \"a\\ufffd\": 2}", fails(1, -1, "the key /a\ufffd appears twice")},
		{"a surrogate written out, not escaped", "{\"\xed\xa0\x80\": 1, \"\\ud800\": 2}", ok},
	})
	if _, err := Decode("json", `{"a": [{"b": 1, "b": 2}]}`); err == nil || !strings.Contains(err.Error(), "the key /a/0/b appears twice") {
		t.Errorf("Decode = %v, want the duplicate key refused", err)
	}
}

func TestCheck_XML(t *testing.T) {
	runChecks(t, "xml", []checkCase{
		{"element", `<result><a x="1">text</a><b/></result>`, ok},
		{"declaration, doctype, comments", "<?xml version=\"1.0\"?>\n<!DOCTYPE r>\n<!-- c -->\n<r>&amp;&lt;<![CDATA[<x>]]></r>\n<!-- after -->\n", ok},
		{"namespaces", `<r xmlns="urn:a" xmlns:p="urn:p"><p:x p:a="1" a="2"/></r>`, ok},
		{"other encoding declared", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<a/>", ok},
		{"fenced", "```xml\n<a/>\n```", fails(1, 0, "wrapped in a ``` code fence: submit the XML document alone")},
		{"preamble", "Here is the XML:\n<a/>", fails(1, 0, `starts with text before the XML document ("Here is the XML:")`)},
		{"json given", `{"a": 1}`, fails(1, 0, "this is JSON, but the answer must be XML")},
		{"truncated", "<a>\n  <b>\n    <c>text", fails(3, 12, "the XML ends while <c> (line 3, column 5) is still open: was the answer cut off?")},
		{"truncated in a tag", "<a><b", fails(1, 6, "the XML ends while <a> (line 1, column 1) is still open")},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"only a comment", "<!-- nothing -->", fails(0, 0, "the answer has no root element")},
		{"two roots", "<a></a>\n<b/>", fails(2, 1, "a second root element <b> starts here")},
		{"text after root", "<a/>\nLet me know if this helps.", fails(2, 1, `there is text after the root element ("Let me know if this helps.")`)},
		{"text before root", "hello <a/>", fails(1, 1, `there is text before the root element ("hello")`)},
		{"duplicate attribute", "<a>\n  <b x=\"1\" x=\"2\"/>\n</a>", fails(2, 3, `element <b> has the attribute "x" twice`)},
		{"undefined entity", "<a>&nbsp;</a>", fails(1, 4, "the entity &nbsp; is not declared: XML knows only &amp;")},
		{"bare ampersand", "<a>x & y</a>", fails(1, 6, "write a literal & as &amp;")},
		{"mismatched", "<a>\n  <b>\n  </c>\n</a>", fails(3, 3, "element <b> closed by </c>")},
		{"prose", "No findings.", fails(1, 1, `there is text before the root element ("No findings.")`)},
		{"huge", bigXML(answerCap), ok},
		{"huge truncated", cut(bigXML(answerCap)), fails(-1, -1, "is still open: was the answer cut off?")},
	})
}

// TestCheck_XMLWellFormed holds the XML check to XML 1.0's
// well-formedness where encoding/xml is lenient or strict in the wrong
// places (issue 30); xmltest holds it to the rest (conformance_test.go).
func TestCheck_XMLWellFormed(t *testing.T) {
	laughs := "<!DOCTYPE r [\n<!ENTITY l0 \"lol\">\n"
	for i := 1; i <= 9; i++ {
		laughs += fmt.Sprintf("<!ENTITY l%d \"%s\">\n", i, strings.Repeat(fmt.Sprintf("&l%d;", i-1), 10))
	}
	laughs += "]>\n<r>&l9;</r>"
	runChecks(t, "xml", []checkCase{
		{"attributes run together", `<a b="c"d="e"/>`, fails(1, 9, `the attribute "d" of <a> must be separated from what comes before it by a space`)},
		{"entity declared", "<!DOCTYPE r [<!ENTITY who \"world\">]>\n<r a=\"&who;\">hello &who;</r>", ok},
		{"entity with markup", "<!DOCTYPE r [<!ENTITY e \"<b>x</b>\">]><r>&e;</r>", ok},
		{"entity unbalanced", "<!DOCTYPE r [<!ENTITY e \"<b>\">]><r>&e;</b></r>", fails(1, 36, "opens <b> without closing it")},
		{"< through an entity in an attribute", "<!DOCTYPE r [<!ENTITY e \"&#60;\">]><r a=\"&e;\"/>", fails(1, 41, `in the text of the entity &e; "<" is not allowed in an attribute value`)},
		{"billion laughs", laughs, fails(13, 4, "the entities of this document expand to more than 1048576 bytes")},
		{"entity refers to itself", "<!DOCTYPE r [<!ENTITY a \"&b;\"><!ENTITY b \"&a;\">]><r>&a;</r>", fails(1, 53, "refers to itself")},
		{"external entity not fetched", "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>", ok},
		{"external entity in an attribute", "<!DOCTYPE r [<!ENTITY x SYSTEM \"x.txt\">]><r a=\"&x;\"/>", fails(1, 48, "is an external entity")},
		{"undeclared with an external subset", "<!DOCTYPE r SYSTEM \"r.dtd\"><r>&nbsp;</r>", ok},
		{"mixed separators", "<!DOCTYPE r [<!ELEMENT r (a|b,c)>]><r/>", fails(1, 30, `a group separates its items all with "|" or all with ","`)},
		{"PE reference inside a declaration", "<!DOCTYPE r [<!ENTITY % p \"(a)\"><!ELEMENT r %p;>]><r/>", fails(1, 45, "content is EMPTY, ANY or a group")},
		{"PE reference between declarations", "<!DOCTYPE r [<!ENTITY % p \"<!ENTITY e 'x'>\">%p;]><r/>", ok},
		{"unknown declaration", "<!DOCTYPE r [<!FOO r>]><r/>", fails(1, 14, "is not a markup declaration")},
		{"double dash in a comment", "<r><!-- a -- b --></r>", fails(1, 11, `"--" is not allowed inside a comment`)},
		{"< in an attribute", `<r a="<"/>`, fails(1, 7, `"<" is not allowed in an attribute value`)},
		{"]]> in text", "<r>a]]>b</r>", fails(1, 5, `"]]>" is not allowed in text`)},
		{"illegal character", "<r>\x01</r>", fails(1, 4, "the character U+0001 is not allowed in XML")},
		{"illegal character reference", "<r>&#0;</r>", fails(1, 4, "refers to a character XML does not allow")},
		{"xml declaration late", "<!-- c --><?xml version=\"1.0\"?><r/>", fails(1, 11, "may only stand at the very start")},
		{"space before the declaration", "\n<?xml version=\"1.0\"?>\n<r/>", fails(2, 1, "nothing may come before the XML declaration")},
		{"bad version", "<?xml version=\"2.0\"?><r/>", fails(1, 1, "the XML declaration is malformed")},
		{"name of the fifth edition", "<\u309ab/>", ok},
	})
}

func TestCheck_CSV(t *testing.T) {
	runChecks(t, "csv", []checkCase{
		{"rows", "a,b\n1,2\n", ok},
		{"one record", "just,one,row", ok},
		{"quoted", "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"multi\nline\",2\n", ok},
		{"crlf", "a,b\r\n1,2\r\n", ok},
		{"header that starts like a phrase", "ok,name\n1,2\n", ok},
		{"fenced", "```csv\na,b\n1,2\n```", fails(1, 0, "wrapped in a ``` code fence: submit the CSV rows alone")},
		{"preamble", "Here is the CSV:\na,b\n1,2\n", fails(1, 0, `starts with text before the CSV rows ("Here is the CSV:")`)},
		{"json given", `[{"a": 1}, {"a": 2}]`, fails(1, 0, "this is JSON, but the answer must be CSV")},
		{"xml given", "<rows><row>1</row></rows>", fails(1, 0, "this is XML, but the answer must be CSV")},
		{"markdown table", "| a | b |\n|---|---|\n| 1 | 2 |\n", fails(1, 0, "this is a Markdown table, but the answer must be CSV")},
		{"truncated quote", "a,b\n\"1,2\n", fails(2, 0, "a quoted field opened on this line is never closed: was the answer cut off?")},
		{"ragged", "a,b\n1,2\n1,2,3\n", fails(3, 0, "this record has 3 fields, but the first record (line 1) has 2")},
		{"bare quote", "a,b\n1\"x,2\n", fails(2, 2, `a quote (") appears inside a field that is not quoted`)},
		{"stray quote", "a,b\n\"1\"x,2\n", fails(2, 3, `a quote (") is misplaced`)},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"remark after", "a,b\n1,2\nLet me know if you need anything else.", fails(3, 0, "the answer ends with a remark after the CSV rows")},
		{"huge", bigCSV(answerCap), ok},
		{"huge truncated", cut(bigCSV(answerCap)), fails(-1, 0, "never closed: was the answer cut off?")},
		{"huge truncated between fields", truncateAfter(bigCSV(answerCap), "\",high,"), fails(-1, 0, "this record has 3 fields, but the first record (line 1) has 4")},
	})
}

func TestCheck_YAML(t *testing.T) {
	runChecks(t, "yaml", []checkCase{
		{"mapping", "a: 1\nb:\n  - x\n  - y\n", ok},
		{"sequence", "- a\n- b\n", ok},
		{"flow mapping", "{a: 1, b: [x, y]}", ok},
		{"anchor and tag", "base: &b {x: 1}\nother: *b\ntagged: !!str 12\n", ok},
		{"document marker", "---\na: 1\n", ok},
		{"key that starts like a phrase", "ok: true\nname: x\n", ok},
		{"fenced", "```yaml\na: 1\n```", fails(1, 0, "wrapped in a ``` code fence: submit the YAML document alone")},
		{"preamble", "Here is the YAML:\na: 1\n", fails(1, 0, `starts with text before the YAML document ("Here is the YAML:")`)},
		{"json given", `{"a": 1, "b": [1, 2]}`, fails(1, 0, "this is JSON, but the answer must be YAML")},
		{"prose", "The build passed and nothing needs fixing.", fails(1, 1, "this is plain text or a single value, not YAML data")},
		{"scalar", "42", fails(1, 1, "not YAML data")},
		{"two documents", "a: 1\n---\nb: 2\n", fails(3, 0, "a second YAML document starts here (2 in all)")},
		{"duplicate key", "a: 1\na: 2\n", fails(2, 1, `mapping key "a" already defined`)},
		{"truncated flow", "a: [1, 2\n", fails(1, 4, "sequence end token ']' not found")},
		{"truncated quote", "a: 1\nb: \"abc\n", fails(2, 4, "could not find end character of double-quoted text")},
		{"tab indent", "a: 1\n\tb: 2\n", fails(2, 1, "cannot start any token")},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"comment only", "# nothing\n", fails(0, 0, "the answer has no YAML data")},
		{"huge", bigYAML(answerCap), ok},
		{"huge truncated", bigYAML(answerCap)[:len(bigYAML(answerCap))/2] + "\"", fails(-1, -1, "double-quoted")},
	})
}

// TestCheck_YAMLPreamble holds the line between a sentence YAML reads as
// a key with no value and a real key: keys with spaces, keys with no
// value, capitalised keys and keys over a sequence stay data.
// TestCheck_YAMLSuite holds the YAML check to the specification where
// goccy/go-yaml is lenient, and words what it cannot read as coda's limit
// (issue 30; yaml-test-suite's cases in conformance_test.go).
func TestCheck_YAMLSuite(t *testing.T) {
	runChecks(t, "yaml", []checkCase{
		{"comment after a quote", "key: \"value\"# c\n", fails(1, 13, `a comment needs a space before "#"`)},
		{"comment after a flow sequence", "k: [a, b]#c\n", fails(1, 10, `a comment needs a space before "#"`)},
		{"comment after a comma", "k: [a, b,#c\n  ]\n", fails(1, 10, `a comment needs a space before "#"`)},
		{"lone dash in a flow sequence", "- [-, -]\n", fails(1, 4, `a lone "-" cannot stand in a flow collection`)},
		{"flow sequence not indented", "flow: [a,\nb]\n", fails(2, 1, "continues the flow collection of line 1")},
		{"quoted string not indented", "q: \"a\nb\"\n", fails(2, 1, "continues the quoted string of line 1")},
		{"tab as indentation in a flow", "- [\n\tfoo,\n foo\n ]\n", fails(2, 1, "continues the flow collection of line 1")},
		{"comma in a tag", "- !!str, xxx\n", fails(1, 3, "holds a flow indicator")},
		{"flow sequence indented", "flow: [a,\n  b]\nq: \"a\n  b\"\n", ok},
		{"plain scalar on lines", "safe: a!b\n  !\"#,[]\n", ok},
		{"a directive and one document", "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", ok},
		{"%YAML and one document", "%YAML 1.2\n---\na: 1\n", ok},
		{"complex key", "? - a\n  - b\n: c\nd: e\n", fails(1, 0, "coda cannot read complex keys")},
		{"empty key", ": a\n: b\n", fails(1, 0, "coda cannot read empty keys")},
		{"two directives", "%YAML 1.2\n%TAG ! tag:x,2000:\n---\na: 1\n", fails(2, 0, "coda cannot read more than one directive")},
	})
	var limit *Error
	if err := Check("yaml", ": a\n"); !errors.As(err, &limit) || !limit.Limit {
		t.Errorf("Check(%q) = %#v, want an Error marked Limit", ": a\n", err)
	}
	if err := Check("yaml", "key: \"value\"# c\n"); !errors.As(err, &limit) || limit.Limit {
		t.Errorf("Check = %#v, want an Error not marked Limit", err)
	}
	if v, err := Decode("yaml", "b: !!binary aGk=\nl: |\n  x\n   "); err != nil || v.(map[string]any)["b"] != "aGk=" || v.(map[string]any)["l"] != "x\n \n" {
		t.Errorf("Decode = %#v, %v: want b the base64 text, l with its last line and line break", v, err)
	}
}

func TestCheck_YAMLPreamble(t *testing.T) {
	const before = "starts with text before the YAML document"
	runChecks(t, "yaml", []checkCase{
		// Sentences, refused as preambles.
		{"here you go", "Here you go:\nname: Ada\nage: 36\n", fails(1, 0, before+` ("Here you go:")`)},
		{"here you go, lower case", "here you go:\nname: Ada\n", fails(1, 0, before)},
		{"here it is, over a sequence", "Here it is:\n- a\n- b\n", fails(1, 0, before)},
		{"your yaml", "Your YAML:\nname: Ada\n", fails(1, 0, before)},
		{"result below", "Result below:\nname: Ada\n", fails(1, 0, before)},
		{"as requested, the data", "The requested data:\nname: Ada\n", fails(1, 0, before)},
		{"a sentence ends in it", "Done! Your data:\nname: Ada\n", fails(1, 0, before)},
		{"a capitalised label", "Output:\nname: Ada\n", fails(1, 0, before+` ("Output:")`)},
		{"the format's name as a label", "YAML:\n- a\n", ok}, // a sequence under one word may be data
		{"the format's name over keys", "YAML:\nname: Ada\n", fails(1, 0, before)},
		{"with blank lines after", "Here you go:\n\n\nname: Ada\n", fails(1, 0, before)},
		{"a lead phrase", "Sure, here's the YAML:\nname: Ada\n", fails(1, 0, before)},
		{"several words and a colon", "The data you asked for:\nname: Ada\n", fails(1, 0, before)},
		{"and then a fence", "Here you go:\n```yaml\nname: Ada\n```\n", fails(1, 0, "wraps the YAML document in a ``` code fence")},

		// Data, accepted.
		{"keys with spaces", "first name: Ada\nlast name: Lovelace\n", ok},
		{"a key with no value", "notes:\ntitle: Report\n", ok},
		{"a key with spaces and no value", "first name:\nlast name: Lovelace\n", ok},
		{"a capitalised key with spaces over a sequence", "Shopping list:\n- eggs\n- milk\n", ok},
		{"a lower-case label word with no value", "output:\nformat: json\n", ok},
		{"a label word over a nested block", "Output:\n  format: json\n", ok},
		{"a label word over a sequence", "Answer:\n- 42\n", ok},
		{"a capitalised key that is not a label", "Title:\nAuthor: Ada\n", ok},
		{"a phrase as a value", "description: Here you go\nname: Ada\n", ok},
		{"here as a key with a value", "here: 1\nthere: 2\n", ok},
		{"a nested block under a sentence-like key", "Project here:\n  status: green\n", ok},
		{"a quoted key", "\"Here you go\":\nname: Ada\n", ok},
		{"a document marker first", "---\nname: Ada\n", ok},
		{"an indented document", "  name: Ada\n  age: 36\n", ok},
		{"a single line", "Here you go:\n", ok}, // a mapping of one null: nothing follows to be the data
		{"a key holding a flow mapping", "summary: {a: 1}\n", ok},
		{"yaml as a word in a value", "format: yaml\nfile: data.yml\n", ok},
	})
}

// TestCheck_JSONAfterLeadIn: "Here is the JSON: {...}" is a sentence and
// then JSON, whatever the format; YAML would read it as a key.
func TestCheck_JSONAfterLeadIn(t *testing.T) {
	for _, tc := range []struct{ format, content, want string }{
		{"json", `Here is the JSON: {"a": 1}`, `starts with text before the JSON value ("Here is the JSON:"): submit the JSON value alone`},
		{"json", "Here is the JSON: {\n  \"a\": 1\n}\n", `starts with text before the JSON value ("Here is the JSON:")`},
		{"json", `JSON: [1, 2]`, `starts with text before the JSON value ("JSON:")`},
		{"json", `Here is the JSON: {"a": [1, 2`, `starts with text before the JSON value`},
		{"yaml", `Here is the JSON: {"a": 1}`, `starts with text ("Here is the JSON:") and then JSON, but the answer must be YAML: submit the YAML document alone`},
		{"yaml", `Sure, the data: [{"a": 1}]`, `and then JSON, but the answer must be YAML`},
		{"toml", `Here is the JSON: {"a": 1}`, `and then JSON, but the answer must be TOML`},
		{"csv", `Here is the JSON: [{"a": 1}]`, `and then JSON, but the answer must be CSV`},
	} {
		err := Check(tc.format, tc.content)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%s, %q) = %v, want %q", tc.format, tc.content, err, tc.want)
		}
	}
	for _, tc := range []struct{ format, content string }{
		{"yaml", `summary: {"a": 1}`},
		{"yaml", "title: The JSON: spec\n"},
		{"yaml", `json: {"a": 1}`},
		{"yaml", "config: [1, 2]\n"},
	} {
		if err := Check(tc.format, tc.content); err != nil && strings.Contains(err.Error(), "starts with text") {
			t.Errorf("Check(%s, %q) = %v: data called a preamble", tc.format, tc.content, err)
		}
	}
	// A key naming JSON whose flow value ends on its line, with more data
	// after it, is YAML data, not a sentence and then JSON.
	for _, content := range []string{
		"json body: {\"method\": \"GET\"}\nretries: 3\n",
		"request json: [\"a\", \"b\"]\nretries: 3\n",
		"JSON: {\"a\": 1}\nb: 2\n",
	} {
		if err := Check("yaml", content); err != nil {
			t.Errorf("Check(yaml, %q) = %v, want valid YAML", content, err)
		}
	}
}

func TestCheck_TOML(t *testing.T) {
	runChecks(t, "toml", []checkCase{
		{"keys and tables", "a = 1\n[t]\nb = \"x\"\n", ok},
		{"arrays of tables and dates", "d = 1979-05-27T07:32:00Z\n[[items]]\nx = 1\n[[items]]\nx = 2\n", ok},
		{"key that starts like a phrase", "ok = true\nb = 1\n", ok},
		{"fenced", "```toml\na = 1\n```", fails(1, 0, "wrapped in a ``` code fence: submit the TOML document alone")},
		{"preamble", "Here is the TOML:\na = 1\n", fails(1, 0, `starts with text before the TOML document ("Here is the TOML:")`)},
		{"json given", `{"a": 1}`, fails(1, 0, "this is JSON, but the answer must be TOML")},
		{"yaml given", "a: 1\nb: 2\n", fails(1, 0, "this line is written as YAML (key: value), but the answer must be TOML (key = value)")},
		{"missing value", "a = \n", fails(1, 5, "expected value but found '\\n' instead")},
		{"truncated string", "a = 1\nb = \"abc", fails(2, -1, "unexpected EOF")},
		{"duplicate key", "a = 1\na = 2\n", fails(2, -1, "has already been defined")},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"comment only", "# nothing\n", fails(0, 0, "the answer has no TOML keys or tables")},
		{"huge", bigTOML(answerCap), ok},
		{"huge truncated", truncateAfter(bigTOML(answerCap), "name = \"Unch"), fails(-1, -1, "unexpected EOF")},
		// TOML 1.0 by toml-test (issue 30), where BurntSushi/toml v1.6.0 is lenient
		{"dotted keys add to a header's table", "[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", fails(4, 0, "the dotted key b.c.t adds to the table b, which is already defined elsewhere")},
		{"a header for a dotted keys' table", "[fruit]\napple.color = \"red\"\n[fruit.apple]\n", fails(3, 0, "the table [fruit.apple] is defined twice")},
		{"a sub-table of a dotted keys' table", "[fruit]\napple.color = \"red\"\n[fruit.apple.texture]\nsmooth = true\n", ok},
		{"an inline table extended", "t = { a = 1 }\nt.b = 2\n", fails(2, 0, "adds to the table t")},
		{"a key through a value", "a.b.c = 1\na.b = 2\n", fails(2, 0, "the key a.b is defined twice")},
		{"TOML 1.1 inline table on lines", "t = {\n  a = 1 }\n", fails(1, 0, "an inline table spans lines, which only TOML 1.1 allows")},
		{"TOML 1.1 trailing comma", "t = { a = 1, }\n", fails(1, 0, "an inline table ends with a comma, which only TOML 1.1 allows")},
		{"TOML 1.1 byte escape", "s = \"\\x41\"\n", fails(1, 0, `the escape \x is not in TOML 1.0`)},
		{"TOML 1.1 time without seconds", "t = 07:32\n", fails(1, 0, `the time "07:32" has no seconds`)},
		{"line-ending backslash counted", "s = \"\"\"a \\\n b\"\"\"\nt = { a = 1, }\n", fails(3, 0, "an inline table ends with a comma")},
		{"escaped backslash before x", "p = 'C:\\x'\nq = \"C:\\\\xyz\"\n", ok},
		{"offset out of range", "d = 1985-06-18 17:04:07+12:60\n", fails(1, 0, "is out of range")},
	})
}

// TestDecode_TOMLEmptyKey: the empty key keeps its array level and the
// values beside it, which BurntSushi/toml v1.6.0 alone loses.
func TestDecode_TOMLEmptyKey(t *testing.T) {
	got, err := Decode("toml", "a = [[{\"\" = 2}], 1]\nb = {\"\" = {'' = 1}}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{[]any{map[string]any{"": int64(2)}}, int64(1)}, "b": map[string]any{"": map[string]any{"": int64(1)}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
}

func TestCheck_Markdown(t *testing.T) {
	runChecks(t, "markdown", []checkCase{
		{"document", "# Title\n\nSome *text*.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", ok},
		{"closed fences", "# T\n\n```go\nx := 1\n```\n\n~~~\nplain\n~~~\n", ok},
		{"fence in a list", "- step:\n  ```sh\n  ls\n  ```\n- next\n", ok},
		{"fence in a quote", "> ```\n> code\n> ```\n", ok},
		{"fence closed by its quote's end", "> ```\n> aaa\n\nbbb\n", ok},
		{"fence closed by its list item's end", "- ```\n  code\n- next\n", ok},
		{"quoted fence open at the end", "text\n\n> ```\n> aaa\n", fails(3, 0, "the code fence opened here (```) is never closed")},
		{"longer closing fence", "text\n\n```\ncode\n`````\n", ok},
		{"nested fence", "````md\n```go\nx\n```\n````\n\ntext after\n", ok},
		{"empty block", "text\n\n```\n```\n", ok},
		{"sentence and a code example", "Here's how:\n\n```bash\nls\n```\n", ok},
		{"prose", "The build passed.", ok},
		{"wrapped", "```markdown\n# Title\n\ntext\n```\n", fails(1, 0, "the whole answer is wrapped in a ``` code fence: submit the Markdown itself")},
		{"wrapped in tildes", "\n~~~\n# Title\n~~~\n", fails(2, 0, "wrapped in a ~~~ code fence")},
		{"sentence and wrapped", "Here is the report:\n\n```markdown\n# Title\n```\n", fails(3, 0, "the answer is a sentence (\"Here is the report:\") and a ``` code fence around the Markdown")},
		{"wrapped and remark", "```md\n# Title\n```\n\nLet me know if you want changes.\n", fails(1, 0, "the whole answer is wrapped")},
		{"unclosed", "# T\n\n```go\nx := 1\n", fails(3, 0, "the code fence opened here (```) is never closed")},
		{"unclosed at the end", "# T\n\n```", fails(3, 0, "never closed")},
		{"unclosed in a quote", "# T\n\n> ```\n> code\n", fails(3, 0, "never closed")},
		{"unclosed after a closed one", "```\na\n```\n\ntext\n\n~~~~\nb\n~~~\n", fails(7, 0, "the code fence opened here (~~~~) is never closed: add a closing ~~~~ line")},
		{"empty", "", fails(0, 0, "the answer is empty")},
		{"json given", `{"title": "x"}`, fails(1, 0, "this is JSON, but the answer must be Markdown")},
		{"huge", bigMarkdown(answerCap), ok},
		{"huge truncated in code", bigMarkdown(answerCap) + "```go\nfunc f() {\n", fails(-1, 0, "never closed")},
	})
}

func TestCheck_Guards(t *testing.T) {
	links := strings.Repeat("- [a](https://example.com/a)\n", maxBrackets+10)
	attrs := func(dup bool) string {
		var b strings.Builder
		b.WriteString("<a")
		for i := range 40 {
			fmt.Fprintf(&b, " a%d=\"1\"", i)
		}
		if dup {
			b.WriteString(` a7="2"`)
		}
		return b.String() + "/>"
	}
	for _, tc := range []struct {
		format, content string
		want            want
	}{
		{"yaml", "a: " + strings.Repeat("[", 101) + strings.Repeat("]", 101), fails(1, 0, "the YAML nests more than 100 levels deep here")},
		{"yaml", "a: " + strings.Repeat("<", 101), fails(1, 4, `a run of more than 100 "<" is not YAML data`)},
		{"yaml", "a:\n  " + strings.Repeat("- ", 101) + "x\n", fails(2, 0, "nests more than 100 levels")},
		{"yaml", "a: " + strings.Repeat("[", 50) + strings.Repeat("]", 50) + "\nb: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n", ok},
		{"markdown", strings.Repeat("> ", 101) + "x", fails(1, 0, "this line nests more than 100 block quotes or lists")},
		{"markdown", strings.Repeat("1. ", 101) + "x", fails(1, 0, "nests more than 100")},
		{"markdown", links, ok},
		{"markdown", links + "\n```go\nx\n", fails(maxBrackets+12, 0, "the code fence opened here (```) is never closed")},
		{"markdown", "```md\n" + links + "```\n", fails(1, 0, "the whole answer is wrapped in a ``` code fence")},
		{"xml", attrs(false), ok},
		{"xml", attrs(true), fails(1, 1, `element <a> has the attribute "a7" twice`)},
	} {
		runChecks(t, tc.format, []checkCase{{tc.format + " " + tc.want.msg, tc.content, tc.want}})
	}
}

// TestCheck_Pathological feeds each check 256 KiB of degenerate input of
// the kind a model stuck in a loop writes; every check must finish fast.
func TestCheck_Pathological(t *testing.T) {
	n := answerCap
	nested := func() string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i%200), i)
		}
		return b.String()
	}
	inputs := map[string]string{
		"[[[": strings.Repeat("[", n), "{{{": strings.Repeat("{", n), "- - -": strings.Repeat("- ", n/2) + "x",
		"> > >": strings.Repeat("> ", n/2) + "```", "1. 1. 1.": strings.Repeat("1. ", n/3) + "x",
		"<a><a>": "<" + strings.Repeat("a><", n/3) + "a/>", "lines": strings.Repeat("a\n", n/2),
		"fences": strings.Repeat("```\n", n/4), "quotes": strings.Repeat("\"", n), "commas": strings.Repeat(",", n),
		"words": strings.Repeat("word ", n/5), "k: k:": strings.Repeat("k: ", n/3), "indent": nested(),
		"[[a]]": strings.Repeat("[[a]]\n", n/6), "a = [[[": "a = " + strings.Repeat("[", n/2),
		"[a](": strings.Repeat("[a](", n/4), "[a]\\n": strings.Repeat("[a]\n", n/4), "*a": strings.Repeat("*a", n/2),
		"table": "|a|b|\n|-|-|\n" + strings.Repeat("|x|y|\n", n/6), "<<<": strings.Repeat("<", n),
		"attributes":        "<a" + attrs(n/8) + "/>",
		"entity refs":       "<!DOCTYPE r [<!ENTITY e \"" + strings.Repeat("x", 1024) + "\">]><r>" + strings.Repeat("&e;", n/4) + "</r>",
		"empty entity refs": "<!DOCTYPE r [<!ENTITY e \"\"><!ENTITY f \"" + strings.Repeat("&e;", 8000) + "\">]><r>" + strings.Repeat("&f;", n/4) + "</r>",
		"entity depth":      "<!DOCTYPE r [<!ENTITY e0 \"x\">" + chain(20) + "]><r>&e20;</r>",
	}
	for name, in := range inputs {
		for _, f := range []string{"json", "xml", "csv", "yaml", "toml", "markdown"} {
			start := time.Now()
			_ = Check(f, in)
			if d := time.Since(start); d > 60*time.Second { // a hang detector, generous for -race on a busy machine
				t.Errorf("Check(%s) of %q took %v", f, name, d)
			}
		}
	}
}

func attrs(k int) string {
	var b strings.Builder
	for i := range k {
		fmt.Fprintf(&b, " a%d=\"\"", i)
	}
	return b.String()
}

// chain declares e1..ek, each referring to the one before.
func chain(k int) string {
	var b strings.Builder
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "<!ENTITY e%d \"&e%d;\">", i, i-1)
	}
	return b.String()
}

// TestCheck_Concurrent runs every check at once: the parsers they share
// (goldmark's, notably) must be safe for concurrent use.
func TestCheck_Concurrent(t *testing.T) {
	var wg sync.WaitGroup
	for _, f := range []string{"json", "xml", "csv", "yaml", "toml", "markdown"} {
		good := big(f, 16<<10)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := Check(f, good); err != nil {
					t.Errorf("Check(%s): %v", f, err)
				}
				if Check(f, "```\n"+good+"```\n") == nil {
					t.Errorf("Check(%s) of a fenced answer passed", f)
				}
			}()
		}
	}
	wg.Wait()
}

func TestCheck_Unchecked(t *testing.T) {
	for _, f := range []string{"text", "TXT", "text/plain", "html", "application/x-custom", ""} {
		if l, _ := Lookup(f); l.HasParser() {
			t.Errorf("%q has a parser", f)
		}
		if err := Check(f, "```\nanything { at all\n"); err != nil {
			t.Errorf("Check(%q) = %v, want nil", f, err)
		}
	}
}

func TestCheck_Aliases(t *testing.T) {
	for label, content := range map[string]string{
		" Application/JSON ": "```json\n{}\n```",
		"text/xml":           "<a/><b/>",
		"application/xml":    "<a/><b/>",
		"text/csv":           "",
		"YML":                "plain words",
		"application/yaml":   "plain words",
		"application/toml":   "a: 1\nb: 2",
		"md":                 "```\nx\n```",
		"text/markdown":      "```\nx\n```",
	} {
		if f, _ := Lookup(label); !f.HasParser() {
			t.Errorf("%q has no parser", label)
		}
		if Check(label, content) == nil {
			t.Errorf("Check(%q, %q) = nil, want an error", label, content)
		}
	}
}

// TestFormats holds the table to what its readers rely on: every
// spelling resolves to its entry, the picker is complete and ordered, and
// what the model is told matches what is checked.
func TestFormats(t *testing.T) {
	seen := map[int]string{}
	for _, f := range Formats() {
		for _, l := range append([]string{f.Label}, f.Aliases...) {
			if l != strings.ToLower(strings.TrimSpace(l)) {
				t.Errorf("%s: spelling %q is not trimmed lower case", f.Label, l)
			}
			for _, spelled := range []string{l, strings.ToUpper(l), " " + l + "\n"} {
				if got, ok := Lookup(spelled); !ok || got.Label != f.Label {
					t.Errorf("Lookup(%q) = %q, %v; want %q", spelled, got.Label, ok, f.Label)
				}
				if Canonical(spelled) != f.Label {
					t.Errorf("Canonical(%q) = %q, want %q", spelled, Canonical(spelled), f.Label)
				}
			}
		}
		if f.Name == "" {
			t.Errorf("%s has no name", f.Label)
		}
		if (f.Rule != "") != f.HasParser() {
			t.Errorf("%s: a rule (%q) is told exactly when a check enforces it (check: %v)", f.Label, f.Rule, f.HasParser())
		}
		if f.HasDecoder() && !f.HasParser() {
			t.Errorf("%s decodes but has no check", f.Label)
		}
		if f.Picker > 0 {
			if f.Title == "" {
				t.Errorf("%s is in the picker without a title", f.Label)
			}
			if other := seen[f.Picker]; other != "" {
				t.Errorf("%s and %s share picker place %d", other, f.Label, f.Picker)
			}
			seen[f.Picker] = f.Label
		}
	}
	picker := PickerFormats()
	if len(picker) != len(seen) {
		t.Fatalf("PickerFormats has %d entries, the table %d", len(picker), len(seen))
	}
	for i, f := range picker {
		if f.Picker != i+1 {
			t.Errorf("picker place %d holds %s (place %d): places run 1, 2, 3...", i+1, f.Label, f.Picker)
		}
	}
	if _, ok := Lookup("application/vnd.acme"); ok {
		t.Error("an unknown label was found")
	}
}

func TestError_Error(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Line: 3, Column: 5, Msg: "bad"}, "line 3, column 5: bad"},
		{Error{Line: 3, Msg: "bad"}, "line 3: bad"},
		{Error{Msg: "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		format, content string
		want            any
	}{
		{"json", `{"i": 1, "f": 1.5, "e": 1e3, "big": 12345678901234567890, "l": [true, null, "s"]}`,
			map[string]any{"i": int64(1), "f": 1.5, "e": 1000.0, "big": 12345678901234567890.0, "l": []any{true, nil, "s"}}},
		{"json", `[1, -2]`, []any{int64(1), int64(-2)}},
		{"yaml", "1: one\nn: 18446744073709551615\nneg: -3\nd: 2024-01-02\nt: 2024-01-02T03:04:05Z\nf: 1.5\nnested: {k: [a]}\n",
			map[string]any{"1": "one", "n": 18446744073709551615.0, "neg": int64(-3), "d": "2024-01-02",
				"t": "2024-01-02T03:04:05Z", "f": 1.5, "nested": map[string]any{"k": []any{"a"}}}},
		{"yml", "- a\n- 2\n", []any{"a", int64(2)}},
		{"toml", "a = 1\nd = 2024-01-02\nt = 07:32:00\nl = 1979-05-27T07:32:00\no = 1979-05-27T07:32:00Z\n[[items]]\nx = 1.5\n",
			map[string]any{"a": int64(1), "d": "2024-01-02", "t": "07:32:00", "l": "1979-05-27T07:32:00",
				"o": "1979-05-27T07:32:00Z", "items": []any{map[string]any{"x": 1.5}}}},
	} {
		got, err := Decode(tc.format, tc.content)
		if err != nil {
			t.Errorf("Decode(%s, %q): %v", tc.format, tc.content, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Decode(%s, %q) (-want +got):\n%s", tc.format, tc.content, diff)
		}
	}
}

func TestDecode_Refusals(t *testing.T) {
	for _, tc := range []struct{ format, content, msg string }{
		{"json", "```json\n{}\n```", "code fence"},
		{"json", `{"a": 1} x`, "text after the JSON value"},
		{"yaml", "just prose", "not YAML data"},
		{"yaml", `{"a": 1}`, "this is JSON, but the answer must be YAML"},
		{"toml", "Here is the TOML:\na = 1", "starts with text"},
	} {
		_, err := Decode(tc.format, tc.content)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("Decode(%s, %q) = %v, want an *Error containing %q", tc.format, tc.content, err, tc.msg)
		}
	}
	for _, f := range []string{"xml", "csv", "markdown", "text"} {
		if l, _ := Lookup(f); l.HasDecoder() {
			t.Errorf("%s has a decoder", f)
		}
		if _, err := Decode(f, "x"); err == nil {
			t.Errorf("Decode(%q) = nil error", f)
		}
	}
}

func TestPosition(t *testing.T) {
	s := "ab\ncé\n\nx"
	for _, tc := range []struct{ off, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 2, 3}, {7, 3, 1}, {8, 4, 1}, {100, 4, 2},
	} {
		line, col := position(s, tc.off)
		if line != tc.line || col != tc.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tc.off, line, col, tc.line, tc.col)
		}
	}
}

func TestLeadIn(t *testing.T) {
	for line, want := range map[string]bool{
		"Here is the CSV:":                     true,
		"Sure! Here's the YAML you asked for.": true,
		"Certainly.":                           true,
		"The findings from the review:":        true,
		"ok: true":                             false,
		"ok = true":                            false,
		"ok,name":                              false,
		"sure":                                 false,
		"name,severity,file,line":              false,
		"title: The findings from the review":  false,
		"here_is: 1":                           false,
	} {
		if got := leadIn(line); got != want {
			t.Errorf("leadIn(%q) = %v, want %v", line, got, want)
		}
	}
}
