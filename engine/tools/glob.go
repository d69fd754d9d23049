package tools

import "github.com/coda-acp/coda/engine"

// A glob is an engine.Glob: the one matcher of relative paths (list_files,
// grep, and the taint gate's private paths).
type glob struct{ engine.Glob }

func compileGlob(pattern string) (glob, error) {
	g, err := engine.CompileGlob(pattern)
	return glob{g}, err
}

func (g glob) match(rel string) bool { return g.Match(rel) }
