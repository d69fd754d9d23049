package taint

import (
	"os"
	"path/filepath"
	"testing"
)

// privateFixture is a workspace with private and ordinary files, links
// between them, and an additional root.
func privateFixture(t *testing.T) (cwd, extra string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, extra = filepath.Join(base, "proj"), filepath.Join(base, "extra")
	for _, f := range []string{
		"proj/.env", "proj/.env.local", "proj/app/.env.production", "proj/certs/server.pem", "proj/certs/server.key",
		"proj/home/.ssh/id_rsa", "proj/home/.ssh/id_rsa.pub", "proj/config/secrets/db.yaml", "proj/secrets/api.txt",
		"proj/src/main.go", "proj/README.md", "proj/environment.go", "proj/.envrc", "proj/keys.go",
		"extra/.env", "extra/notes.md",
	} {
		p := filepath.Join(base, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"proj/notes.txt":     ".env",                     // a file link to a private file
		"proj/cfg":           "config/secrets",           // a directory link into a private directory
		"proj/abs.txt":       filepath.Join(cwd, ".env"), // absolute
		"proj/to-readme.env": "README.md",                // a private name pointing at an ordinary file
		"proj/src/up":        "..",                       // a link up, for `..` after a link
		"proj/deep":          "config/secrets/inner",     // `deep/..` is config/secrets, not proj
	}
	if err := os.MkdirAll(filepath.Join(cwd, "config", "secrets", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(base, l)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	return cwd, extra
}

func TestPrivatePaths_private(t *testing.T) {
	cwd, extra := privateFixture(t)
	p, err := newPrivatePaths(DefaultPrivate, cwd, []string{cwd, extra}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		private bool
		name    string
	}{
		// The defaults.
		{".env", true, ".env"},
		{".env.local", true, ".env.local"},
		{"app/.env.production", true, "app/.env.production"},
		{"certs/server.pem", true, "certs/server.pem"},
		{"certs/server.key", true, "certs/server.key"},
		{"home/.ssh/id_rsa", true, "home/.ssh/id_rsa"},
		{"home/.ssh/id_rsa.pub", true, "home/.ssh/id_rsa.pub"},
		{"config/secrets/db.yaml", true, "config/secrets/db.yaml"},
		{"secrets/api.txt", true, "secrets/api.txt"},
		{"src/main.go", false, "src/main.go"},
		{"README.md", false, "README.md"},
		{"environment.go", false, "environment.go"},
		{".envrc", false, ".envrc"},
		{"keys.go", false, "keys.go"},
		// Symlinks: the link's own name or where it leads.
		{"notes.txt", true, "notes.txt"},
		{"cfg/db.yaml", true, "cfg/db.yaml"},
		{"abs.txt", true, "abs.txt"},
		{"to-readme.env", false, "to-readme.env"},
		// `..` cannot dodge a glob, lexically or through a link.
		{"src/../.env", true, ".env"},
		{"src/up/.env", true, "src/up/.env"},
		{"deep/../db.yaml", true, "db.yaml"},
		{cwd + "/deep/../db.yaml", true, "db.yaml"},
		{filepath.Join(cwd, "src", "..", "certs", "server.key"), true, "certs/server.key"},
		// An additional root is matched relative to itself, named after it.
		{filepath.Join(extra, ".env"), true, "extra/.env"},
		{filepath.Join(extra, "notes.md"), false, "extra/notes.md"},
		// Outside every root, the whole path is matched.
		{"/somewhere/else/.env", true, "/somewhere/else/.env"},
		{"/somewhere/else/x.txt", false, "/somewhere/else/x.txt"},
	}
	for _, tt := range tests {
		name, private := p.private(tt.path)
		if private != tt.private || name != tt.name {
			t.Errorf("private(%q) = %q, %v; want %q, %v", tt.path, name, private, tt.name, tt.private)
		}
	}
}

// A root that itself lies in a directory a glob names makes nothing under
// it private: globs match the path relative to the root.
func TestPrivatePaths_relativeToRoot(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	cwd := filepath.Join(base, "secrets", "proj")
	p, err := newPrivatePaths(DefaultPrivate, cwd, []string{cwd}, false)
	if err != nil {
		t.Fatal(err)
	}
	if name, private := p.private(filepath.Join(cwd, "main.go")); private {
		t.Errorf("%s is private under a root inside secrets/", name)
	}
	if _, private := p.private(filepath.Join(cwd, ".env")); !private {
		t.Error(".env is not private")
	}
}

func TestPrivatePaths_case(t *testing.T) {
	cwd, _ := privateFixture(t)
	for _, tt := range []struct {
		fold    bool
		path    string
		private bool
	}{
		{true, ".ENV", true},
		{true, "Certs/Server.PEM", true},
		{true, "Config/Secrets/x", true},
		{true, "ID_RSA", true},
		{false, ".ENV", false},
		{false, "Certs/Server.PEM", false},
		{false, ".env", true},
	} {
		p, err := newPrivatePaths(DefaultPrivate, cwd, []string{cwd}, tt.fold)
		if err != nil {
			t.Fatal(err)
		}
		if _, private := p.private(tt.path); private != tt.private {
			t.Errorf("fold=%v: private(%q) = %v, want %v", tt.fold, tt.path, private, tt.private)
		}
	}
}

func TestPrivatePaths_custom(t *testing.T) {
	cwd, _ := privateFixture(t)
	p, err := newPrivatePaths([]string{"*.go", "config/**"}, cwd, []string{cwd}, false)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"src/main.go": true, "keys.go": true, "config/secrets/db.yaml": true, ".env": false} {
		if _, got := p.private(path); got != want {
			t.Errorf("private(%q) = %v, want %v", path, got, want)
		}
	}
	if err := CheckPrivate([]string{"[a-"}); err == nil {
		t.Error("CheckPrivate accepted a malformed glob")
	}
}
