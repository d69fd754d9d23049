package tools

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine/taint"
)

// maxNamedPaths bounds the words of a command line taken as paths.
const maxNamedPaths = 64

// commandSources are what a shell command may have read, for the taint
// gate, which keeps the private ones (DESIGN §13: a command line naming a
// private path is a source): each word of the line that may be a path,
// with `~` and $VARIABLES expanded and globs matched in dir, named (the gate
// reads a private one itself, since what the command did with it is
// unknown) and carrying the command's output. The line's words are read
// as the shell reads them, quotes and escapes undone (shellWords), so
// `.e'n'v` and `.e\nv` name .env.
func commandSources(dir, line, output string) []taint.Source {
	var out []taint.Source
	add := func(p string) {
		if len(out) < maxNamedPaths {
			out = append(out, taint.Source{Path: p, Text: output, Named: true})
		}
	}
	home, _ := os.UserHomeDir()
	for _, w := range shellWords(line) {
		if _, v, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") {
			w = v // NAME=VALUE: the value
		} else if strings.HasPrefix(w, "-") {
			if _, v, ok := strings.Cut(w, "="); ok {
				w = v // --file=PATH
			} else {
				continue
			}
		}
		if w == "" || len(w) > 4096 {
			continue
		}
		if rest, ok := strings.CutPrefix(w, "~"); ok && home != "" && (rest == "" || rest[0] == '/') {
			w = home + rest
		}
		w = os.ExpandEnv(w)
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if strings.ContainsAny(w, "*?[") {
			// Globbed as the shell would, but only a word with one element
			// of wildcards (`.e*`, `*/.env`, `secrets/*`), so that one
			// folder is listed: `echo '/*/*/*/*/*/*'` costs the shell
			// nothing and would have coda list 1.5 million names. Another
			// is named as written (`*/*/.env` is private by its name); a
			// file it reaches is still found in what the command printed,
			// or in an artifact made of it (taint.Gate.Found, Decide).
			if wildElements(w) > 1 {
				add(p)
			} else if len(out) < maxNamedPaths {
				matches, _ := filepath.Glob(p)
				for _, m := range matches {
					add(m)
				}
			}
			continue
		}
		add(p)
	}
	return out
}

// wildElements counts the elements of a path that hold a wildcard.
func wildElements(path string) int {
	n := 0
	for _, e := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if strings.ContainsAny(e, "*?[") {
			n++
		}
	}
	return n
}

// shellWords are the words of a command line as a POSIX shell reads them,
// before expansion: split at white space and at the operators ; | & < > (
// ) and backquotes, quotes and backslashes removed (`".e"nv`, `.e'n'v`,
// `.e\nv` and `$'.e\x6ev'` are each `.env`). $( starts a new word, as
// the command inside is read for words too. What the shell would expand
// ($VAR, ~, globs) is left for the caller.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";|&<>()`", c) >= 0:
			end()
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			end()
			i++
		case c == '\\':
			inWord = true
			if i+1 < len(line) {
				i++
				if line[i] != '\n' { // a backslash and a newline join lines
					w.WriteByte(line[i])
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '$' && i+1 < len(line) && line[i+1] == '\'':
			inWord = true
			i = ansiQuoted(&w, line, i+2)
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					i++
					if line[i] == '\n' {
						continue
					}
				}
				w.WriteByte(line[i])
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	end()
	return words
}

// ansiQuoted writes the $'...' string of line that starts at i (after
// the quote) to w, its backslash escapes undone, and returns where it
// ends (its closing quote).
func ansiQuoted(w *strings.Builder, line string, i int) int {
	for ; i < len(line) && line[i] != '\''; i++ {
		c := line[i]
		if c != '\\' || i+1 >= len(line) {
			w.WriteByte(c)
			continue
		}
		i++
		switch e := line[i]; e {
		case 'n':
			w.WriteByte('\n')
		case 't':
			w.WriteByte('\t')
		case 'x':
			n, v := 0, byte(0)
			for ; n < 2 && i+1 < len(line) && isHex(line[i+1]); n++ {
				i++
				v = v<<4 | unhex(line[i])
			}
			if n == 0 {
				w.WriteString("\\x")
			} else {
				w.WriteByte(v)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := e - '0'
			for n := 1; n < 3 && i+1 < len(line) && '0' <= line[i+1] && line[i+1] <= '7'; n++ {
				i++
				v = v<<3 | (line[i] - '0')
			}
			w.WriteByte(v)
		default:
			w.WriteByte(e) // \' \\ \" and the rest as themselves
		}
	}
	return i
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
