package tools

import (
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
