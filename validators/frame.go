package validators

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A kind describes a format for the messages shared by every check: how
// it is named and what the model should submit instead.
type kind struct {
	name string // "JSON"
	what string // "the JSON value": what the model should submit alone
	// starts reports whether a trimmed line can begin the data. Formats
	// whose data can start with almost anything (CSV, YAML, TOML) leave it
	// nil and rely on leadIn to spot a sentence before the data.
	starts func(line string) bool
	// opens reports whether a trimmed line is where the data probably
	// begins after a sentence of preamble (stricter than starts).
	opens func(line string) bool
	// leadKey reports whether the first line, though it parses as data,
	// is a sentence before it (YAML reads "Here you go:" as a key).
	leadKey func(first, next string) bool
}

var (
	kindJSON = kind{name: "JSON", what: "the JSON value", starts: jsonStarts,
		opens: func(l string) bool { return l[0] == '{' || l[0] == '[' }}
	kindXML = kind{name: "XML", what: "the XML document",
		starts: func(l string) bool { return l[0] == '<' },
		opens:  func(l string) bool { return l[0] == '<' }}
	kindCSV  = kind{name: "CSV", what: "the CSV rows"}
	kindYAML = kind{name: "YAML", what: "the YAML document", leadKey: yamlLeadKey}
	kindTOML = kind{name: "TOML", what: "the TOML document"}
)

func jsonStarts(l string) bool {
	switch c := l[0]; {
	case c == '{', c == '[', c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return strings.HasPrefix(l, "true") || strings.HasPrefix(l, "false") || strings.HasPrefix(l, "null")
}

// position turns a byte offset into a 1-based line and column, the column
// counted in characters.
func position(content string, off int) (line, col int) {
	off = max(0, min(off, len(content)))
	before := content[:off]
	line = strings.Count(before, "\n") + 1
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCountInString(before[lineStart:]) + 1
}

// errorAt is an Error positioned at a byte offset of content.
func errorAt(content string, off int, format string, args ...any) *Error {
	line, col := position(content, off)
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// lines iterates over content's lines with their 1-based numbers, without
// the line terminator. yield returns false to stop.
func lines(content string, yield func(n int, line string) bool) {
	n := 0
	for len(content) > 0 {
		n++
		line := content
		if i := strings.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			content = ""
		}
		if !yield(n, strings.TrimSuffix(line, "\r")) {
			return
		}
	}
}

// firstLines returns the first two non-blank lines, trimmed, with their
// numbers (0 when absent).
func firstLines(content string) (n1 int, l1 string, n2 int, l2 string) {
	lines(content, func(n int, line string) bool {
		t := strings.TrimSpace(line)
		if t == "" {
			return true
		}
		if n1 == 0 {
			n1, l1 = n, t
			return true
		}
		n2, l2 = n, t
		return false
	})
	return
}

// lastLine returns the last non-blank line, trimmed, and its number.
func lastLine(content string) (int, string) {
	end := len(strings.TrimRightFunc(content, isSpace))
	if end == 0 {
		return 0, ""
	}
	start := strings.LastIndexByte(content[:end], '\n') + 1
	line, _ := position(content, start)
	return line, strings.TrimSpace(content[start:end])
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// fence returns the fence marker a trimmed line opens with ("```" or
// "~~~", at least three), or "".
func fence(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// quote shortens a line for a message.
func quote(line string) string {
	const max = 60
	if utf8.RuneCountInString(line) > max {
		r := []rune(line)
		line = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", line)
}

// leadPhrases open the sentences models put before (or after) the data.
var leadPhrases = []string{
	"here is", "here's", "here are", "sure", "certainly", "of course", "absolutely",
	"below is", "below are", "the following", "following is", "i have", "i've", "i'll",
	"i will", "okay", "ok", "great", "as requested", "this is the", "these are the",
	"based on", "alright", "no problem", "got it", "below you", "please find",
}

var afterPhrases = []string{
	"let me know", "i hope", "hope this helps", "feel free", "if you need", "if you'd like",
	"if you have any", "would you like", "this csv", "this yaml", "this toml", "the above",
}

// leadIn reports whether a trimmed line reads like a sentence introducing
// the data ("Here is the CSV:") rather than like data.
func leadIn(line string) bool {
	l := strings.ToLower(line)
	if i := strings.IndexAny(l, ":="); i >= 0 && !strings.Contains(l[:i], " ") && i < len(l)-1 {
		return false // "ok: true", "ok = 1": a key, not a sentence
	}
	if strings.Contains(l, " = ") {
		return false
	}
	for _, p := range leadPhrases {
		if rest, ok := strings.CutPrefix(l, p); ok {
			if rest == "" || strings.ContainsRune(" ,!.:", rune(rest[0])) {
				return strings.Contains(l, " ") || strings.HasSuffix(l, "!") || strings.HasSuffix(l, ".")
			}
		}
	}
	// "The report you asked for:": several words ending in a colon.
	return strings.HasSuffix(l, ":") && strings.Count(l, " ") >= 3 && !strings.ContainsAny(l, "=,{}[]\"#")
}

// afterword reports whether a trimmed line reads like a closing remark.
func afterword(line string) bool {
	l := strings.ToLower(line)
	for _, p := range afterPhrases {
		if strings.HasPrefix(l, p) {
			return strings.Contains(l, " ")
		}
	}
	return false
}

// looksJSON reports whether trimmed content is a JSON object or array.
func looksJSON(trimmed string) bool {
	return len(trimmed) > 1 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid([]byte(trimmed))
}

// looksXML reports whether trimmed content is shaped like an XML or HTML
// document: it opens with a tag and closes with one.
func looksXML(trimmed string) bool {
	if len(trimmed) < 3 || trimmed[0] != '<' || trimmed[len(trimmed)-1] != '>' {
		return false
	}
	c := trimmed[1]
	return c == '?' || c == '!' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// frame spots the common ways a model wraps or mislabels an otherwise
// reasonable answer: nothing at all, a code fence around it, another format
// than the one asked, a sentence before it or a remark after it. It looks
// only at the ends of content (and, for JSON and XML, for the line where
// the data starts), so it is cheap enough to run before every parse.
func frame(content string, k kind) *Error {
	n1, l1, n2, l2 := firstLines(content)
	if n1 == 0 {
		return &Error{Msg: fmt.Sprintf("the answer is empty: submit %s itself", k.what)}
	}
	if f := fence(l1); f != "" {
		return &Error{Line: n1, Msg: fmt.Sprintf("the answer is wrapped in a %s code fence: submit %s alone, without the fence", f[:3], k.what)}
	}
	trimmed := strings.TrimSpace(content)
	if k.name != "JSON" && looksJSON(trimmed) {
		return &Error{Line: n1, Msg: fmt.Sprintf("this is JSON, but the answer must be %s: submit %s", k.name, k.what)}
	}
	if k.name != "XML" && looksXML(trimmed) {
		return &Error{Line: n1, Msg: fmt.Sprintf("this is XML, but the answer must be %s: submit %s", k.name, k.what)}
	}
	if lead, ok := jsonAfterLeadIn(l1, content); ok {
		if k.name == "JSON" {
			return &Error{Line: n1, Msg: fmt.Sprintf("the answer starts with text before the JSON value (%s): submit the JSON value alone, with nothing before it", quote(lead))}
		}
		return &Error{Line: n1, Msg: fmt.Sprintf("the answer starts with text (%s) and then JSON, but the answer must be %s: submit %s alone, with nothing before it", quote(lead), k.name, k.what)}
	}
	if k.starts != nil {
		if k.starts(l1) {
			return nil
		}
		// Text first: is the data further down?
		var found int
		var at string
		lines(content, func(n int, line string) bool {
			t := strings.TrimSpace(line)
			if n > n1 && t != "" && (k.opens(t) || fence(t) != "") {
				found, at = n, t
				return false
			}
			return true
		})
		if found == 0 {
			return nil // not a preamble: the parser says what is wrong
		}
		return preamble(n1, l1, found, at, k)
	}
	if n2 != 0 && (leadIn(l1) || k.leadKey != nil && k.leadKey(lineAt(content, n1), lineAt(content, n2))) {
		return preamble(n1, l1, n2, l2, k)
	}
	if n2 != 0 {
		if n, l := lastLine(content); afterword(l) {
			return &Error{Line: n, Msg: fmt.Sprintf("the answer ends with a remark after %s (%s): submit %s alone, with nothing after it", k.what, quote(l), k.what)}
		}
	}
	return nil
}

// preamble words the error for text before the data; next is the first
// line after the text, which may open a code fence.
func preamble(n1 int, l1 string, n2 int, next string, k kind) *Error {
	if f := fence(next); f != "" {
		return &Error{Line: n1, Msg: fmt.Sprintf("the answer starts with a sentence (%s) and wraps %s in a %s code fence (line %d): submit %s alone, with no sentence and no fence",
			quote(l1), k.what, f[:3], n2, k.what)}
	}
	return &Error{Line: n1, Msg: fmt.Sprintf("the answer starts with text before %s (%s): submit %s alone, with nothing before it", k.what, quote(l1), k.what)}
}

// jsonAfterLeadIn spots a sentence that introduces JSON on its own first
// line: "Here is the JSON: {...}". YAML reads it as a key whose value is
// the JSON, so without this it would pass as YAML data, or be called YAML
// where JSON was asked. lead is the sentence, up to its colon.
func jsonAfterLeadIn(l1, content string) (lead string, ok bool) {
	i := strings.Index(l1, ":")
	if i < 0 {
		return "", false
	}
	lead, rest := l1[:i+1], strings.TrimLeft(l1[i+1:], " \t")
	if rest == "" || (rest[0] != '{' && rest[0] != '[') {
		return "", false
	}
	r, _ := utf8.DecodeRuneInString(lead)
	named := strings.Contains(strings.ToLower(lead), "json") && (strings.Contains(lead, " ") || unicode.IsUpper(r))
	if !named && !leadIn(lead) {
		return "", false // "json: {...}" is a key
	}
	// The JSON runs from here to the end of the answer: valid, or at least
	// opening like JSON (an object's quoted key, an array), if it was cut.
	// (l1 is the first line with text, so its first occurrence is it.)
	data := strings.TrimSpace(content[strings.Index(content, l1)+len(l1)-len(rest):])
	if json.Valid([]byte(data)) {
		return lead, true
	}
	if json.Valid([]byte(rest)) && !leadIn(lead) {
		// A value whole on the first line with more after it does not run
		// to the end: a key of YAML data ("request json: {...}" and more
		// keys), unless the lead is plainly a sentence.
		return "", false
	}
	inner := strings.TrimLeft(data[1:], " \t\r\n")
	return lead, inner != "" && (inner[0] == '"' || data[0] == '[' && strings.ContainsRune("[{\"0123456789-tfn]", rune(inner[0])))
}

// leadWords are words that make a key with no value a sentence to the
// reader rather than data ("Here you go:", "Your YAML below:").
var leadWords = map[string]bool{
	"here": true, "here's": true, "heres": true, "below": true, "following": true, "follows": true,
	"requested": true, "yaml": true, "yml": true,
}

// leadLabels are the single words a model puts above its answer as a
// label ("Output:"), capitalised as a label is, with no value.
var leadLabels = map[string]bool{
	"yaml": true, "yml": true, "here": true, "output": true, "result": true, "results": true,
	"answer": true, "response": true, "sure": true, "okay": true, "done": true,
}

// yamlLeadKey reports whether the first line of a YAML answer, which YAML
// reads as a key with no value ("Here you go:" then the document at the
// same indentation), is a sentence introducing the data rather than a
// key. Keys with spaces and keys with no value are both legitimate
// ("first name: Ada", "notes:"), so it takes more: an unindented, unquoted
// key whose value is null, or a sequence written at its own indentation,
// and that reads as a sentence: several words, one of which only speaks
// to the reader (here, below, following, yaml; "you go"; a word ending a
// sentence), or one capitalised label such as "Output:" above keys.
func yamlLeadKey(first, next string) bool {
	if first == "" || first[0] == ' ' || first[0] == '\t' {
		return false
	}
	key, ok := strings.CutSuffix(strings.TrimRight(first, " \t"), ":")
	if !ok || key == "" || strings.ContainsAny(key[:1], "-?&*!|>[{#'\"%@`") || strings.Contains(key, ": ") {
		return false
	}
	nextIndent := len(next) - len(strings.TrimLeft(next, " "))
	if nextIndent > 0 {
		return false // a nested block: the key has a value
	}
	sequence := strings.HasPrefix(next, "- ") || next == "-"
	words := strings.Fields(strings.ToLower(key))
	if len(words) == 1 {
		r, _ := utf8.DecodeRuneInString(key)
		return !sequence && unicode.IsUpper(r) && leadLabels[strings.Trim(words[0], ",.!")]
	}
	for i, w := range words {
		if leadWords[strings.Trim(w, ",.!")] || (w == "go" && i > 0 && words[i-1] == "you") {
			return true
		}
		if i < len(words)-1 && (strings.HasSuffix(w, "!") || strings.HasSuffix(w, ".")) {
			return true // a sentence ends inside the "key"
		}
	}
	return false
}
