package glob

import (
	"strings"
	"testing"
)

// The shortcuts for `**/NAME` and `**/DIR/**` match what the general
// matcher does.
func TestPattern_shortcuts(t *testing.T) {
	paths := []string{"a/b.env", "a/.env.", ".pem", "a/.key.bak", "id_rsa", "a/id_rs", ".env", "a/.env", "a/b/.env.local", ".envrc", "x.pem", "a/x.pem/y", "secrets", "secrets/db", "a/secrets/b/c", "a/secretsx/b", "asecrets/b", "a/b", "id_rsa.pub", "d/id_rsa"}
	for _, pat := range []string{"**/.env", "**/.env.*", "**/*.pem", "**/id_rsa*", "**/secrets/**", ".env", "*.pem", "**/*.key", "**/a*b", "**/[.]env"} {
		g, err := Compile(pat)
		if err != nil {
			t.Fatal(err)
		}
		if g.base == "" && g.dir == "" {
			t.Errorf("%s: no shortcut", pat)
		}
		for _, p := range paths {
			if got, want := g.Match(p), matchSegs(g.segs, strings.Split(p, "/")); got != want {
				t.Errorf("%s on %s: %v, want %v", pat, p, got, want)
			}
		}
	}
}
