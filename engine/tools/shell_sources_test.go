package tools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A command line's words are read as the shell reads them: quotes and
// escapes that split a name in the line do not split it in the command.
func TestShellWords(t *testing.T) {
	for line, want := range map[string][]string{
		`cat .env`:                       {"cat", ".env"},
		`cat .e''nv`:                     {"cat", ".env"},
		`cat .e""nv`:                     {"cat", ".env"},
		`cat ".e"nv`:                     {"cat", ".env"},
		`cat '.e'"n"v`:                   {"cat", ".env"},
		`cat .e\nv`:                      {"cat", ".env"},
		"cat .e\\\nnv":                   {"cat", ".env"},
		`cat $'.e\x6ev' $'\056env'`:      {"cat", ".env", ".env"},
		`cat "a \"b\" c"`:                {"cat", `a "b" c`},
		`grep -r KEY .|head -1>out;echo`: {"grep", "-r", "KEY", ".", "head", "-1", "out", "echo"},
		`echo $(cat .e''nv) ` + "`id`":   {"echo", "cat", ".env", "id"},
		`FOO=bar cmd --file=.env ''`:     {"FOO=bar", "cmd", "--file=.env", ""},
		`unterminated 'quote`:            {"unterminated", "quote"},
		`cat "${HOME}/.env" ~/x`:         {"cat", "${HOME}/.env", "~/x"},
	} {
		if diff := cmp.Diff(want, shellWords(line)); diff != "" {
			t.Errorf("shellWords(%q) (-want +got):\n%s", line, diff)
		}
	}
}

// A command line that names a private path through quotes names it.
func TestCommandSources_quoting(t *testing.T) {
	dir := t.TempDir()
	for _, line := range []string{`cat .e''nv`, `cat .e""nv`, `cat ".e"nv`, `cp .e\nv out.txt`} {
		var paths []string
		for _, s := range commandSources(dir, line, "") {
			paths = append(paths, s.Path)
		}
		if !slices.Contains(paths, filepath.Join(dir, ".env")) {
			t.Errorf("commandSources(%q) names %q, not .env", line, paths)
		}
	}
}

// A word with wildcards is globbed when one of its elements holds them
// (`*/.env`, `.e*`): one folder is listed. One with more is not (`*/*/.env`
// lists every folder's folders; `/*/*/*/*/*/*` 1.5 million names): what
// such a command reads is found in what it prints, or in an artifact
// made of it, instead.
func TestCommandSources_globBounded(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/.env", "a/b/.env", ".env.local"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), nil, 0o600)
	}
	named := func(line string) []string {
		var paths []string
		for _, s := range commandSources(dir, line, "") {
			if rel, err := filepath.Rel(dir, s.Path); err == nil {
				paths = append(paths, filepath.ToSlash(rel))
			}
		}
		return paths
	}
	for line, want := range map[string][]string{
		"cat */.env":   {"a/.env"},
		"cat .e*":      {".env.local"},
		"cat */*/.env": {"*/*/.env"},
	} {
		if diff := cmp.Diff(want, named(line)[1:]); diff != "" {
			t.Errorf("commandSources(%q) (-want +got):\n%s", line, diff)
		}
	}
}
