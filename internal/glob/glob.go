// Package glob is the one matcher of slash-separated relative paths:
// list_files' and grep's patterns (engine/tools) and the taint gate's
// private paths (engine/taint).
package glob

import (
	"fmt"
	"path"
	"strings"
)

// A Pattern matches slash-separated relative paths. `*`, `?` and `[...]` work
// within one path segment as in path.Match; a `**` segment matches any
// number of directories, none included. A pattern without `/` matches a
// file's name at any depth, as `**/pattern` would.
type Pattern struct{ segs []string }

// Compile checks pattern and compiles it.
func Compile(pattern string) (Pattern, error) {
	p := strings.Trim(strings.ReplaceAll(pattern, "\\", "/"), "/")
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return Pattern{}, fmt.Errorf("the pattern %q is empty", pattern)
	}
	if !strings.Contains(p, "/") && p != "**" {
		p = "**/" + p
	}
	g := Pattern{segs: strings.Split(p, "/")}
	for _, s := range g.segs {
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return Pattern{}, fmt.Errorf("the pattern %q is malformed: %v", pattern, err)
		}
	}
	return g, nil
}

// Match reports whether the slash-separated relative path rel matches.
func (g Pattern) Match(rel string) bool {
	return matchSegs(g.segs, strings.Split(rel, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range name {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
