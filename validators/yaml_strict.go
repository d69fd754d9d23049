package validators

import (
	"fmt"
	"strings"
)

// goccy/go-yaml accepts some YAML the specification forbids, and cannot
// read some it allows (yaml-test-suite, issue 30). yamlLex reads a
// document's tokens once, line by line, and finds both: the forbidden
// constructs it accepts ("key: "value"# c", a comment glued to a flow
// indicator, a lone "-" in a flow collection, a flow or quoted scalar whose
// lines are not indented past its block, a tag holding a flow indicator),
// which checkYAML refuses; and the constructs it cannot read (complex and
// empty keys, an anchor or tag on an empty value, a tab on a blank line, a
// key: value pair in a flow sequence, two directives before a document),
// which name the refusal when goccy fails, so that the model is told coda
// cannot read them rather than that its YAML is wrong. It is a lexer, not
// a parser: it errs towards finding nothing, never towards refusing valid
// YAML.

// yamlLex is the state of the scan.
type yamlLex struct {
	s    string
	flow []byte // open flow collections, '[' or '{'
	// ctx is the indentation the lines of a multi-line flow collection or
	// quoted scalar must exceed, and from is the line it starts on.
	ctx, from  int
	quote      byte // the quote of a quoted scalar spanning lines
	block      int  // the indentation a block scalar's lines exceed; -2 outside one
	plain      int  // the indentation a plain scalar's next lines exceed; -2 when none goes on
	bad        *Error
	unread     string // what coda cannot read, the first found
	unreadAt   int    // its line
	directives int    // directive lines since the last document
}

// yamlScan lexes content.
func yamlScan(content string) *yamlLex {
	l := &yamlLex{s: content, block: -2, plain: -2}
	lines(content, func(n int, line string) bool {
		l.line(n, line)
		return l.bad == nil
	})
	return l
}

func (l *yamlLex) invalid(n, i int, format string, args ...any) {
	if l.bad == nil {
		l.bad = &Error{Line: n, Column: i + 1, Msg: fmt.Sprintf(format, args...)}
	}
}

func (l *yamlLex) cannot(n int, what string) {
	if l.unread == "" {
		l.unread, l.unreadAt = what, n
	}
}

func (l *yamlLex) line(n int, line string) {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	blank := strings.TrimLeft(line, " \t") == ""
	if l.block != -2 {
		if blank || indent > l.block {
			return // a block scalar's content
		}
		l.block = -2
	}
	if l.plain != -2 && !blank && l.quote == 0 && len(l.flow) == 0 {
		if indent > l.plain {
			return // a plain scalar's next line
		}
		l.plain = -2
	}
	if blank {
		if strings.Contains(line, "\t") && l.quote == 0 && len(l.flow) == 0 {
			l.cannot(n, "a blank line holding a tab")
		}
		return
	}
	if l.quote != 0 || len(l.flow) > 0 {
		rest := strings.TrimLeft(line, " \t")
		if indent <= l.ctx && !strings.HasPrefix(rest, "#") {
			what := "flow collection"
			if l.quote != 0 {
				what = "quoted string"
			}
			l.invalid(n, 0, "this line continues the %s of line %d, so it must be indented more than that line's block (%d spaces)", what, l.from, l.ctx+1)
			return
		}
	} else if strings.HasPrefix(line, "%") {
		if l.directives++; l.directives > 1 {
			l.cannot(n, "more than one directive (%YAML, %TAG) before a document")
		}
		return
	} else if strings.HasPrefix(line, "---") {
		l.directives = 0
	}
	l.tokens(n, line, indent)
}

// tokens lexes one line's tokens.
func (l *yamlLex) tokens(n int, line string, indent int) {
	i := 0
	start := true       // at the start of a node
	first := true       // no block indicator before, on this line
	var last byte       // what ended the previous token: 'q' quote, 'f' flow indicator, 'p' plain, 'i' indicator
	flowCtx := func() { // a flow collection or quoted scalar starts here
		if first {
			l.ctx = min(indent, 1) - 1
		} else {
			l.ctx = indent
		}
		l.from = n
	}
	if l.quote != 0 {
		i = l.quoted(n, line, 0)
		if l.quote != 0 {
			return
		}
		start, last = false, 'q'
	}
	if len(l.flow) == 0 && (strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t') {
		i = 3
	}
	spaced := func(j int) bool { return j >= len(line) || line[j] == ' ' || line[j] == '\t' }
	for i < len(line) && l.bad == nil {
		c := line[i]
		inFlow := len(l.flow) > 0
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#':
			if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' && (last == 'q' || last == 'f') {
				l.invalid(n, i, "a comment needs a space before \"#\"")
			}
			return
		case c == '"' || c == '\'':
			if !start && !inFlow {
				i = plainEnd(line, i, inFlow)
				last = 'p'
				continue
			}
			if len(l.flow) == 0 {
				flowCtx()
			}
			l.quote = c
			i = l.quoted(n, line, i+1)
			if l.quote != 0 {
				return
			}
			start, last = false, 'q'
			if i < len(line) && line[i] == '#' {
				l.invalid(n, i, "a comment needs a space before \"#\"")
				return
			}
			continue
		case (c == '[' || c == '{') && (start || inFlow):
			if !inFlow {
				flowCtx()
			}
			l.flow = append(l.flow, c)
			i++
			start, last = true, 'f'
			continue
		case (c == ']' || c == '}') && inFlow:
			l.flow = l.flow[:len(l.flow)-1]
			i++
			start, last = false, 'f'
			j := i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			if j < len(line) && line[j] == ':' && (len(l.flow) > 0 || spaced(j+1)) {
				l.cannot(n, "complex keys (a sequence or a mapping as a key)")
			}
			continue
		case c == ',' && inFlow:
			i++
			start, last = true, 'f'
			continue
		case c == '?' && start && (spaced(i+1) || inFlow && strings.IndexByte(",]}", line[i+1]) >= 0):
			l.cannot(n, "complex keys (a key written with \"?\")")
			i++
			start, last, first = true, 'i', false
			continue
		case c == '-' && start && !inFlow && spaced(i+1):
			i++
			start, last, first = true, 'i', false
			continue
		case c == '-' && start && inFlow && (spaced(i+1) || strings.IndexByte(",]}", line[i+1]) >= 0):
			l.invalid(n, i, "a lone \"-\" cannot stand in a flow collection: quote it (\"-\")")
			return
		case c == ':' && (spaced(i+1) || inFlow && strings.IndexByte(",]}", line[i+1]) >= 0 || inFlow && last == 'q'):
			if start {
				l.cannot(n, "empty keys (a \":\" with no key before it)")
			}
			if inFlow && l.flow[len(l.flow)-1] == '[' {
				l.cannot(n, "a key: value pair inside a flow sequence")
			}
			i++
			start, last, first = true, 'i', false
			continue
		case (c == '|' || c == '>') && start && !inFlow:
			l.block = indent
			if strings.HasPrefix(line, "---") {
				l.block = -1
			}
			return
		case (c == '!' || c == '&') && start:
			j := i
			for j < len(line) && !spaced(j) && !(inFlow && strings.IndexByte(",[]{}", line[j]) >= 0) {
				j++
			}
			if c == '!' && !inFlow && !strings.HasPrefix(line[i:], "!<") && strings.ContainsAny(line[i:j], ",[]{}") {
				l.invalid(n, i, "the tag %s holds a flow indicator (one of , [ ] { }), which a tag cannot", quote(line[i:j]))
				return
			}
			rest := strings.TrimLeft(line[j:], " \t")
			if rest == "" || strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, ":") && spaced(len(line)-len(rest)+1) {
				l.cannot(n, "an anchor or a tag on an empty value")
			}
			i = j
			continue
		}
		i = plainEnd(line, i, inFlow)
		start, last = false, 'p'
		if i == len(line) && !inFlow {
			l.plain = indent // it may go on, on more indented lines
		}
	}
}

// plainEnd returns where the plain scalar (or alias) starting at i ends on
// its line.
func plainEnd(line string, i int, inFlow bool) int {
	for i++; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '#' && (line[i-1] == ' ' || line[i-1] == '\t'):
			return i
		case c == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t' || inFlow && strings.IndexByte(",[]{}", line[i+1]) >= 0):
			return i
		case inFlow && strings.IndexByte(",[]{}", c) >= 0:
			return i
		}
	}
	return i
}

// quoted scans a quoted scalar's text from i, and returns where it ends
// (after its closing quote), or len(line) with l.quote still set when it
// goes on to the next line.
func (l *yamlLex) quoted(n int, line string, i int) int {
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && l.quote == '"':
			i++
		case c == '\'' && l.quote == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i++
		case c == l.quote:
			l.quote = 0
			return i + 1
		}
	}
	return len(line)
}

// yamlUnreadable words goccy's refusal e of content as what coda cannot
// read, when content holds such a construct.
func yamlUnreadable(content string, e *Error) *Error {
	l := yamlScan(content)
	if l.unread == "" {
		return e
	}
	return &Error{Line: l.unreadAt, Limit: true, Msg: fmt.Sprintf("coda cannot read %s, although YAML allows it (its YAML reader stops with %q): write the data without it", l.unread, e.Msg)}
}
