package tools

import (
	"fmt"
	"path"
	"strings"
)

// A glob matches slash-separated relative paths. `*`, `?` and `[...]` work
// within one path segment as in path.Match; a `**` segment matches any
// number of directories, none included. A pattern without `/` matches a
// file's name at any depth, as `**/pattern` would.
type glob struct{ segs []string }

func compileGlob(pattern string) (glob, error) {
	p := strings.Trim(strings.ReplaceAll(pattern, "\\", "/"), "/")
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return glob{}, fmt.Errorf("the pattern %q is empty", pattern)
	}
	if !strings.Contains(p, "/") && p != "**" {
		p = "**/" + p
	}
	g := glob{segs: strings.Split(p, "/")}
	for _, s := range g.segs {
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return glob{}, fmt.Errorf("the pattern %q is malformed: %v", pattern, err)
		}
	}
	return g, nil
}

func (g glob) match(rel string) bool {
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
