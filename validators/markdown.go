package validators

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown is goldmark's CommonMark parser, made at the first Markdown
// check, not at start-up. What GitHub-flavoured Markdown adds is inline
// (links, strikethrough, task boxes), which no check reads, but for
// tables, which gfmTable finds where a check needs them: the GFM package,
// goldmark/extension, compiles large regular expressions whenever a
// program that imports it starts.
var markdown = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
})

// checkMarkdown accepts any Markdown except an answer wrapped whole in a
// code fence and a code fence that is never closed. CommonMark has no
// invalid input, so these structural mistakes are what can be checked.
func checkMarkdown(content string) error {
	return checkMarkdownWith(markdown(), content)
}

func checkMarkdownWith(md parser.Parser, content string) error {
	if strings.TrimSpace(content) == "" {
		return &Error{Msg: "the answer is empty: submit the Markdown itself"}
	}
	if trimmed := strings.TrimSpace(content); looksJSON(trimmed) {
		return &Error{Line: 1, Msg: "this is JSON, but the answer must be Markdown: submit the Markdown"}
	}
	if e := markdownTooDeep(content); e != nil {
		return e
	}
	if bracketHeavy(content) {
		return scanFences(content)
	}
	src := []byte(content)
	doc := md.Parse(text.NewReader(src))
	m := mdSource{src: content, raw: src, starts: lineStarts(content)}

	var blocks []ast.Node
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		blocks = append(blocks, c)
	}
	if e := m.wrapped(blocks); e != nil {
		return e
	}

	var bad *Error
	cursor := 0 // the first line (0-based) a block without position may open on
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		open, close := m.fenceLines(fb, cursor)
		if open < 0 {
			return ast.WalkContinue, nil
		}
		marker := fence(stripContainer(m.line(open)))
		if marker == "" {
			return ast.WalkContinue, nil
		}
		if close < len(m.starts) && !closes(stripContainer(m.line(close)), marker) && m.endedByContainer(fb, close) {
			cursor = close
			return ast.WalkSkipChildren, nil // CommonMark example 128: closed by its block quote's or list item's end
		}
		if close >= len(m.starts) || !closes(stripContainer(m.line(close)), marker) {
			bad = &Error{Line: open + 1, Msg: fmt.Sprintf("the code fence opened here (%s) is never closed: add a closing %s line after the code (was the answer cut off?)", marker, marker)}
			return ast.WalkStop, nil
		}
		cursor = close + 1
		return ast.WalkSkipChildren, nil
	})
	if bad != nil {
		return bad
	}
	return nil
}

// mdSource is the Markdown source split into lines by offset.
type mdSource struct {
	src    string
	raw    []byte // src as goldmark parsed it, which its segments read
	starts []int  // offset of each line's first byte
}

func lineStarts(s string) []int {
	starts := make([]int, 1, strings.Count(s, "\n")+1)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && i+1 < len(s) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 0-based line holding offset off.
func (m mdSource) lineOf(off int) int {
	return sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > off }) - 1
}

// line returns line i (0-based) without its terminator.
func (m mdSource) line(i int) string {
	end := len(m.src)
	if i+1 < len(m.starts) {
		end = m.starts[i+1]
	}
	return strings.TrimRight(m.src[m.starts[i]:end], "\r\n")
}

// fenceLines finds the 0-based lines of a fenced block's opening fence and
// of the line where its closing fence should be. open is -1 when the
// opening line cannot be found.
func (m mdSource) fenceLines(fb *ast.FencedCodeBlock, cursor int) (open, close int) {
	lines := fb.Lines()
	switch {
	case fb.Info != nil:
		open = m.lineOf(fb.Info.Segment.Start)
	case lines.Len() > 0:
		open = m.lineOf(lines.At(0).Start) - 1
	default: // an empty block with no info string: search from cursor
		open = -1
		for i := cursor; i < len(m.starts); i++ {
			if fence(stripContainer(m.line(i))) != "" {
				open = i
				break
			}
		}
	}
	if open < 0 {
		return -1, 0
	}
	close = open + 1
	if lines.Len() > 0 {
		close = m.lineOf(lines.At(lines.Len()-1).Start) + 1
	}
	return open, close
}

// endedByContainer reports whether a fenced block in a block quote or a
// list item, with no closing fence at line close, was closed by the end
// of that container: the answer goes on after it. One whose container
// runs to the end of the answer is left open, as a cut-off answer is.
func (m mdSource) endedByContainer(fb *ast.FencedCodeBlock, close int) bool {
	if p := fb.Parent(); p == nil || p.Kind() == ast.KindDocument {
		return false
	}
	for i := close; i < len(m.starts); i++ {
		if strings.TrimSpace(stripContainer(m.line(i))) != "" {
			return true
		}
	}
	return false
}

// wrapped reports an answer that is one fenced code block, perhaps with a
// sentence before it or a remark after it.
func (m mdSource) wrapped(blocks []ast.Node) *Error {
	first := func(n ast.Node) string {
		if n.Lines().Len() == 0 {
			return ""
		}
		return strings.TrimSpace(m.line(m.lineOf(n.Lines().At(0).Start)))
	}
	lang := func(fb *ast.FencedCodeBlock) string {
		return strings.ToLower(string(fb.Language(m.raw)))
	}
	var fb *ast.FencedCodeBlock
	var lead string
	switch len(blocks) {
	case 1:
		fb, _ = blocks[0].(*ast.FencedCodeBlock)
	case 2:
		if f, ok := blocks[1].(*ast.FencedCodeBlock); ok && blocks[0].Kind() == ast.KindParagraph && !m.gfmTable(blocks[0]) && leadIn(first(blocks[0])) {
			if l := lang(f); l == "markdown" || l == "md" {
				fb, lead = f, first(blocks[0])
			}
		}
		if f, ok := blocks[0].(*ast.FencedCodeBlock); ok && blocks[1].Kind() == ast.KindParagraph && !m.gfmTable(blocks[1]) && afterword(first(blocks[1])) {
			fb = f
		}
	}
	if fb == nil {
		return nil
	}
	open, _ := m.fenceLines(fb, 0)
	marker := "```"
	if open >= 0 {
		if f := fence(stripContainer(m.line(open))); f != "" {
			marker = f[:3]
		}
	}
	if lead != "" {
		return &Error{Line: open + 1, Msg: fmt.Sprintf("the answer is a sentence (%s) and a %s code fence around the Markdown: submit the Markdown itself, with no sentence before it and no fence around it", quote(lead), marker)}
	}
	return &Error{Line: open + 1, Msg: fmt.Sprintf("the whole answer is wrapped in a %s code fence: submit the Markdown itself, without the fence around it", marker)}
}

// gfmTable reports whether GitHub-flavoured Markdown reads paragraph p as a
// table, whole or in part, as goldmark's GFM table transformer does: the
// first of its lines after the first that is a delimiter row ("|---|:-:|")
// makes a table when the line above it has no more cells than the
// delimiter row has columns. A paragraph read so is no sentence around a
// fence.
func (m mdSource) gfmTable(p ast.Node) bool {
	lines := p.Lines()
	for i := 1; i < lines.Len(); i++ {
		delim, header := lines.At(i), lines.At(i-1)
		if cols := tableDelimiter(delim.Value(m.raw)); cols > 0 {
			return tableCells(header.Value(m.raw)) <= cols
		}
	}
	return false
}

// tableDelimiter is the number of columns of a table's delimiter row, or
// -1 when line is none.
func tableDelimiter(line []byte) int {
	indent := 0
	for _, c := range line {
		if c == ' ' {
			indent++
		} else if c == '\t' {
			indent += 4 - indent%4
		} else {
			break
		}
	}
	if indent > 3 {
		return -1
	}
	allDashes := true
	for _, c := range line {
		allDashes = allDashes && c == '-'
		if !util.IsSpace(c) && c != '-' && c != '|' && c != ':' {
			return -1
		}
	}
	if allDashes {
		return -1
	}
	cols := strings.Split(string(line), "|")
	if util.IsBlank([]byte(cols[0])) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank([]byte(cols[len(cols)-1])) {
		cols = cols[:len(cols)-1]
	}
	for _, col := range cols {
		// ^\s*:?-+:?\s*$, \s as Go's regexp has it
		c := strings.Trim(col, " \t\n\f\r")
		c = strings.TrimPrefix(c, ":")
		c = strings.TrimSuffix(c, ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return -1
		}
	}
	if len(cols) == 0 {
		return -1
	}
	return len(cols)
}

// tableCells counts a table row's cells: split at each "|" not escaped by
// a backslash, one leading and one trailing "|" aside.
func tableCells(line []byte) int {
	line = util.TrimRightSpace(util.TrimLeftSpace(line))
	pos, limit := 0, len(line)
	if limit > 0 && line[0] == '|' {
		pos++
	}
	if limit > 0 && line[limit-1] == '|' {
		limit--
	}
	n := 0
	for ; pos < limit; n++ {
		end := pos
		for end < limit && !(line[end] == '|' && (end == 0 || line[end-1] != '\\')) {
			end++
		}
		pos = end + 1
	}
	return n
}

// maxMarkdownDepth bounds the block quotes and list items one line may
// open: goldmark's time grows steeply with that depth ("> > > ..." or
// "1. 1. 1. ..." of 256 KiB runs for minutes), and no real answer comes
// near it.
const maxMarkdownDepth = 100

func markdownTooDeep(content string) *Error {
	var bad *Error
	lines(content, func(n int, line string) bool {
		if depth, _ := containers(line); depth > maxMarkdownDepth {
			bad = &Error{Line: n, Msg: fmt.Sprintf("this line nests more than %d block quotes or lists: flatten it", maxMarkdownDepth)}
		}
		return bad == nil
	})
	return bad
}

// maxBrackets bounds the "[" in one paragraph handed to goldmark, whose
// link parsing takes time quadratic in them ("[a](" repeated over 256 KiB
// runs for minutes; 4000 take about 0.1 s).
const maxBrackets = 4000

// bracketHeavy reports whether a run of non-blank lines holds more than
// maxBrackets "[".
func bracketHeavy(content string) bool {
	if strings.Count(content, "[") <= maxBrackets {
		return false
	}
	n := 0
	heavy := false
	lines(content, func(_ int, line string) bool {
		if strings.TrimSpace(line) == "" {
			n = 0
		}
		n += strings.Count(line, "[")
		heavy = n > maxBrackets
		return !heavy
	})
	return heavy
}

// scanFences is the line-based stand-in for the goldmark checks on input
// goldmark would be too slow for: it follows fences through block-quote
// and list markers, without goldmark's knowledge of indented code and
// HTML blocks.
func scanFences(content string) error {
	var open, wrap string // the marker of the open fence; of the first one
	openLine, first, last := 0, 0, 0
	var firstClose int
	lines(content, func(n int, line string) bool {
		rest := stripContainer(line)
		if strings.TrimSpace(line) != "" {
			if first == 0 {
				first = n
			}
			last = n
		}
		switch {
		case open == "":
			if f := fence(rest); f != "" && !(f[0] == '`' && strings.Contains(rest[len(f):], "`")) {
				open, openLine = f, n
			}
		case closes(rest, open):
			if openLine == first && firstClose == 0 {
				firstClose, wrap = n, open
			}
			open = ""
		}
		return true
	})
	if open != "" {
		return &Error{Line: openLine, Msg: fmt.Sprintf("the code fence opened here (%s) is never closed: add a closing %s line after the code (was the answer cut off?)", open, open)}
	}
	if firstClose != 0 && firstClose == last {
		return &Error{Line: first, Msg: fmt.Sprintf("the whole answer is wrapped in a %s code fence: submit the Markdown itself, without the fence around it", wrap[:3])}
	}
	return nil
}

// stripContainer removes block-quote markers, list markers and indentation
// from the start of a line, leaving what a fence would start with.
func stripContainer(line string) string {
	_, rest := containers(line)
	return rest
}

// containers counts the block-quote and list markers a line starts with
// and returns the rest of the line.
func containers(line string) (depth int, rest string) {
	for ; ; depth++ {
		line = strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(line, ">"):
			line = line[1:]
			continue
		case len(line) > 1 && strings.ContainsRune("-*+", rune(line[0])) && (line[1] == ' ' || line[1] == '\t'):
			line = line[2:]
			continue
		}
		i := 0
		for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && (line[i+1] == ' ' || line[i+1] == '\t') {
			line = line[i+2:]
			continue
		}
		return depth, line
	}
}

// closes reports whether a stripped line closes a fence opened by marker:
// the same character, at least as many, and nothing else on the line.
func closes(line, marker string) bool {
	f := fence(line)
	return f != "" && f[0] == marker[0] && len(f) >= len(marker) && strings.TrimSpace(line[len(f):]) == ""
}
