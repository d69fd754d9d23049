package validators

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trulyBroken are the sample's schemas that do not compile, and why: the
// schema itself is wrong, so a caller's is refused and a blueprint's fails
// open, with this reason.
var trulyBroken = map[string]string{
	// Two "id" properties: one reader checks the first, another the
	// second; coda refuses a key twice in a schema as in an answer.
	"Github_hard/o84921.json": "the key /properties/actor/properties/id appears twice in one object",
}

// TestCompileSchema_RealWorld compiles the jsonschemabench sample (398
// schemas people wrote, testdata/jsonschemabench): each must compile, as a
// caller's schema would be refused and a blueprint's left unchecked, but
// for those trulyBroken lists, which must fail with their reason.
func TestCompileSchema_RealWorld(t *testing.T) {
	files, err := filepath.Glob("../testdata/jsonschemabench/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no schemas under testdata/jsonschemabench")
	}
	failed := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(f), "../testdata/jsonschemabench/")
		_, err = CompileSchema(b)
		if want, broken := trulyBroken[name]; broken {
			failed++
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: CompileSchema = %v, want an error containing %q", name, err, want)
			}
			continue
		}
		if err != nil {
			failed++
			msg := err.Error()
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
			t.Errorf("%s: %s", name, msg)
		}
	}
	t.Logf("%d of %d schemas compile", len(files)-failed, len(files))
}
