package engine_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The leaf packages (ARCHITECTURE.md) import nothing of coda above them:
// only internal helpers, outputspec (and its projection) and validators, and
// the linter the blueprint. So the taint gate, the store, the
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
		"engine/llm":       nil,
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

// The light leaves are light by weight as well as by arrow: no provider,
// nor engine/llm, nor the store links the answer's checks — the Starlark
// interpreter, the JSON Schema library, goldmark — through any coda
// package, however deep (they speak of the answer through internal/answer).
func TestLayout_light(t *testing.T) {
	const module = "github.com/coda-acp/coda/"
	heavy := []string{"go.starlark.net", "github.com/kaptinlin/jsonschema", "github.com/yuin/goldmark"}
	light := []string{"engine/llm", "store", "engine/provider", "engine/provider/sse"}
	providers, err := filepath.Glob(filepath.Join("provider", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range providers {
		if p, err := build.Default.ImportDir(dir, 0); err == nil && p.Name != "" {
			light = append(light, "engine/provider/"+filepath.Base(dir))
		}
	}
	if len(light) < 8 {
		t.Fatalf("found only %v: the providers moved?", light)
	}
	for _, leaf := range light {
		seen := map[string]bool{}
		var walk func(pkg string)
		walk = func(pkg string) {
			p, err := build.Default.ImportDir(filepath.Join("..", filepath.FromSlash(pkg)), 0)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			for _, imp := range p.Imports {
				for _, h := range heavy {
					if imp == h || strings.HasPrefix(imp, h+"/") {
						t.Errorf("%s links %s (imported by %s)", leaf, imp, pkg)
					}
				}
				dep, ok := strings.CutPrefix(imp, module)
				if !ok || seen[dep] {
					continue
				}
				seen[dep] = true
				if dep == "outputspec" || dep == "validators" || dep == "engine/blueprint" {
					t.Errorf("%s imports %s (through %s): the answer's checks are not a light leaf's", leaf, dep, pkg)
				}
				walk(dep)
			}
		}
		walk(leaf)
	}
}
