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
type Pattern struct {
	segs []string
	// base, for a pattern `**/NAME` (the private paths' usual form), is
	// NAME: matched against rel's last segment alone, without splitting
	// rel. dir, for `**/DIR/**` with DIR plain, is DIR: any segment of rel.
	// A walk matches every file it passes: 20,000 files, 20,000 matches.
	base, dir string
}

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
	switch segs := g.segs; {
	case len(segs) == 2 && segs[0] == "**" && segs[1] != "**":
		g.base = segs[1]
	case len(segs) == 3 && segs[0] == "**" && segs[2] == "**" && !strings.ContainsAny(segs[1], `*?[\`):
		g.dir = segs[1]
	}
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
	switch {
	case g.base != "":
		return matchName(g.base, rel[strings.LastIndexByte(rel, '/')+1:])
	case g.dir != "":
		for seg := range strings.SplitSeq(rel, "/") {
			if seg == g.dir {
				return true
			}
		}
		return false
	}
	return matchSegs(g.segs, strings.Split(rel, "/"))
}

// matchName is path.Match(pat, name) for a pattern that is one name,
// with a plain name and a single `*` before or after a plain part
// (`.env`, `*.pem`, `id_rsa*`) compared without path.Match.
func matchName(pat, name string) bool {
	if !strings.ContainsAny(pat, `?[\`) {
		switch strings.Count(pat, "*") {
		case 0:
			return pat == name
		case 1:
			if rest, ok := strings.CutPrefix(pat, "*"); ok {
				return strings.HasSuffix(name, rest)
			}
			if rest, ok := strings.CutSuffix(pat, "*"); ok {
				return strings.HasPrefix(name, rest)
			}
		}
	}
	ok, _ := path.Match(pat, name)
	return ok
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
