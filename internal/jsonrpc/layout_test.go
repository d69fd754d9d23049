package jsonrpc

import (
	"go/build"
	"strings"
	"testing"
)

// The transport knows nothing of ACP, or of anything else of coda: it
// imports only the standard library, so acp (its user) can never leak in,
// however deep.
func TestLayout_standalone(t *testing.T) {
	p, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
			t.Errorf("jsonrpc imports %s: the transport imports only the standard library", imp)
		}
	}
}
