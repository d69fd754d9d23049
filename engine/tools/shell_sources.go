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
// unknown) and carrying the command's output.
func commandSources(dir, line, output string) []taint.Source {
	var out []taint.Source
	add := func(p string) {
		if len(out) < maxNamedPaths {
			out = append(out, taint.Source{Path: p, Text: output, Named: true})
		}
	}
	words := strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(";|&<>()'\"`", r)
	})
	home, _ := os.UserHomeDir()
	for _, w := range words {
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
			matches, _ := filepath.Glob(p)
			for _, m := range matches {
				add(m)
			}
			continue
		}
		add(p)
	}
	return out
}
