package engine_test

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
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

// maxMethods is the most methods a type of the module's production code
// may have (issue 29): a type past it holds more than one owner's rules.
const maxMethods = 40

// No type of the module's production code has more than maxMethods
// methods: counted by go/ast over every non-test file, by package
// directory and receiver type, value and pointer receivers together.
func TestLayout_methods(t *testing.T) {
	root := ".."
	counts := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			if name := receiverType(fn.Recv.List[0].Type); name != "" {
				counts[filepath.ToSlash(rel)+"."+name]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts["engine.stageVisit"] == 0 || counts["engine.run"] == 0 {
		t.Fatalf("found no methods of the engine's run or stageVisit: the walk missed the module (%d types)", len(counts))
	}
	for typ, n := range counts {
		if n <= maxMethods {
			continue
		}
		t.Errorf("%s has %d methods, over %d: split it into types that each own their state", typ, n, maxMethods)
	}
}

// receiverType is the name of a receiver's type: T of T, *T, T[P] and
// *T[P, Q].
func receiverType(x ast.Expr) string {
	if star, ok := x.(*ast.StarExpr); ok {
		x = star.X
	}
	switch ix := x.(type) {
	case *ast.IndexExpr:
		x = ix.X
	case *ast.IndexListExpr:
		x = ix.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// maxACPLines is the most production lines acp's own directory may hold
// (issue 29): acp proper is protocol types and handlers; the transport,
// the pickers, the history's mapping, the answer's contracts and the like
// live in packages of their own.
const maxACPLines = 4000

// acp's own directory holds at most maxACPLines production lines, its
// subpackages not counted.
func TestLayout_acpLines(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "acp", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines == 0 {
		t.Fatal("found no production lines in acp: the glob missed it")
	}
	if lines > maxACPLines {
		t.Errorf("acp holds %d production lines, over %d: move what is not protocol types and handlers to a package of its own", lines, maxACPLines)
	}
}
