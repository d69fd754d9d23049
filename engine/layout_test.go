package engine_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The leaf packages (ARCHITECTURE.md) import nothing of coda above them:
// only internal helpers, outputspec (and its projection) and validators, and the linter and the
// model vocabulary (llm) the blueprint. So the taint gate, the store, the
// linter and the providers' vocabulary import neither the engine nor each
// other, however deep one looks.
func TestLayout_leaves(t *testing.T) {
	const module = "github.com/coda-acp/coda/"
	below := []string{"outputspec", "outputspec/projection", "validators"}
	for leaf, also := range map[string][]string{
		"engine/taint":     nil,
		"store":            nil,
		"engine/blueprint": nil,
		"engine/lint":      {"engine/blueprint"},
		"engine/llm":       {"engine/blueprint"},
	} {
		seen := map[string]bool{}
		var walk func(pkg string)
		walk = func(pkg string) {
			p, err := build.Default.ImportDir(filepath.Join("..", filepath.FromSlash(pkg)), 0)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			for _, imp := range p.Imports {
				dep, ok := strings.CutPrefix(imp, module)
				if !ok || seen[dep] {
					continue
				}
				seen[dep] = true
				if !strings.HasPrefix(dep, "internal/") && !slices.Contains(below, dep) && !slices.Contains(also, dep) {
					t.Errorf("%s imports %s (through %s), which is above it", leaf, dep, pkg)
				}
				walk(dep)
			}
		}
		walk(leaf)
	}
}
