// Package validators checks answers: the well-formedness of each built-in
// format (json, xml, csv, yaml, toml, markdown), JSON Schema, and Starlark
// validator scripts. It knows nothing of specs, models or ACP; outputspec
// decides which checks apply and words the result for the model.
//
// # Well-formedness
//
// [Check] applies the rules of DESIGN.md §4 step 2 and returns an [*Error]
// positioned at the line and column the parser knows, worded for the model
// that wrote the answer. Before parsing, every format looks for the usual
// mistakes and names them: an empty answer, a ``` code fence around it, a
// sentence before it ("Here is the CSV:") or a remark after it, and JSON
// (or XML) given where another format was asked ("this is JSON, but the
// answer must be XML"). A label with no built-in parser is not checked.
//
// Each check is held to its format's own conformance suite (xmltest,
// toml-test's TOML 1.0 cases, yaml-test-suite, the CommonMark examples;
// ../testdata/conformance, run by conformance_test.go), and differs from
// it only where known-differences.txt says why. XML is read by coda's own
// scanner (xmlwf.go, xmldtd.go); TOML and YAML by their libraries, with
// what they let through that the specification forbids checked beside
// them (toml_tables.go, yaml_strict.go).
//
// [Decode] returns a json, yaml or toml answer's data as JSON-like Go
// values for [Schema.Validate].
//
// # JSON Schema
//
// [CompileSchemaWith] follows the drafts (2020-12 by default, 2019-09, 7, 6, 4)
// and is held to JSON-Schema-Test-Suite (conformance_test.go). It never
// fetches anything: only the bundled draft metaschemas load (metaschema.go),
// other http and https addresses are refused, and a $ref that does not
// resolve inside the schema is a compile error, as is a "type" that names
// no JSON type where "type" is a keyword. The document is read first
// (schemadoc.go): a local $ref may name any JSON Pointer, an ECMA-262
// pattern Go's regexp cannot compile is checked by regexp2, an empty enum
// accepts nothing; the content vocabulary is an annotation. "format" is
// asserted for the formats the providers' strict modes enforce
// (assertedFormats, schemaformat.go) unless [SchemaOptions] says otherwise.
// [Schema.Validate] returns the most specific violations with absolute JSON
// Pointers; [FormatViolations] caps the list for the model.
//
// # Starlark validators
//
// A validator is a Starlark file defining validate(content): it returns
// None or "" when the answer is fine, and a string saying what is wrong
// otherwise. Anything else (an error, a value of another type, running out
// of steps or time) means the validator is broken: [Validator.Validate]
// returns a [*ScriptError] and the caller applies on_validator_error.
//
// The dialect allows while loops, sets, top-level if/for and recursion
// (at most 10,000 calls deep). There is no load, no file, network, clock
// or randomness; print goes to the ScriptError's Output, not to stderr.
// Each call runs in a fresh thread with a step budget ([DefaultMaxSteps]),
// a memory budget ([DefaultMaxMemory]) and a wall-clock guard
// ([DefaultTimeout]). Starlark counts no bytes, so the script is rewritten
// as it is compiled: each operation that can build a value much bigger
// than its operands in one step is charged first (budget.go, guards.go).
//
// Besides Starlark's built-ins, a validator sees:
//
//	parse_json(text, default=...)  the JSON value: dicts (in document
//	                               order), lists, strings, ints, floats,
//	                               bools, None; a key twice in one object
//	                               fails, as in Check
//	parse_yaml(text, default=...)  the first YAML document, as for JSON;
//	                               mapping keys become strings, dates stay
//	                               strings; aliases are bounded as in Check
//	parse_toml(text, default=...)  a dict (keys sorted); dates and times
//	                               become RFC 3339 strings
//	parse_csv(text, default=...)   a list of rows, each a list of strings;
//	                               rows may differ in length
//	parse_xml(text, default=...)   the root element as a tree of dicts
//	json                           go.starlark.net/lib/json: encode,
//	                               decode, indent
//
// parse_xml gives each element as
//
//	{"tag": "finding",               # local name
//	 "ns": "",                       # namespace URI, "" when none
//	 "attrs": {"severity": "high"},  # document order
//	 "text": "Unchecked error",      # its own text and CDATA, trimmed
//	 "children": [...]}              # child elements, in order
//
// Attribute keys are local names; namespace declarations are "xmlns" and
// "xmlns:p"; other namespaced attributes are "{uri}local". parse_xml
// applies Check's XML rules (one root, no text outside it, no duplicate
// attributes, XML 1.0 well-formedness). An entity the DOCTYPE declares
// expands in text when its value is plain text; one whose value holds
// markup, which Check accepts, makes parse_xml fail (encoding/xml builds
// the tree).
//
// The helpers' contract on bad input: the call fails, with the parser's
// positioned message ("parse_json: line 3, column 5: ..."), which makes the
// validator broken, not the answer wrong; the answer already passed Check
// for its format, so a parse failure is the validator's bug. A script that
// parses text which may be malformed passes default=, which is returned
// instead of failing: parse_json(s, default=None).
//
// Errors found when compiling a validator ([LoadValidator],
// [CompileValidator]) are one line naming the file, the line and the
// problem: "x.star:3:5: undefined: foo".
package validators
