package projection

import (
	"os"
	"path/filepath"
	"testing"
)

// A caller's schema is input: Project never panics on it, and Back never
// panics on an answer, whatever either holds.
func FuzzProject(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/jsonschemabench/Github_easy/*.json")
	for _, file := range files[:min(20, len(files))] {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, []byte(`{"a":null,"b":[1,{"key":"k","value":"{}"}]}`))
		}
	}
	f.Add([]byte(`{"$ref":"#"}`), []byte(`null`))
	f.Add([]byte(`{"allOf":[{"$ref":"#"}]}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, schema, answer []byte) {
		for _, fam := range Families {
			for _, reply := range []bool{false, true} {
				p, why := Project(schema, fam, reply, Budget{})
				if p == nil {
					if why == "" {
						t.Fatalf("no projection and no reason: %s", schema)
					}
					continue
				}
				p.Back(answer)
			}
		}
	})
}
