package taint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const envFile = `# production
API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3
DATABASE_URL=postgres://admin:S3cr3tP4ss@db.internal:5432/app
NODE_ENV=production
PORT=5432
`

func TestPrivateLines_find(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	quoted := func(found []uint32) []string {
		var out []string
		for _, i := range found {
			out = append(out, p.lines[i].masked)
		}
		return out
	}
	tests := []struct {
		name, payload string
		want          []string
	}{
		{"verbatim", "The config has\nAPI_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\nin it.", []string{"API_KEY=sk-…f3"}},
		{"the value alone", "Use the key sk-proj-4fGh82kLmN0pQrStUvWxYz12f3 to log in.", []string{"API_KEY=sk-…f3"}},
		{"split across lines", "API_KEY=sk-proj-4fGh82kLm\n   N0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3"}},
		{"re-indented, spaced", "    API_KEY = sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3"}},
		{"a part of a value", "The database is postgres://admin:S3cr3tP4ss@db.internal:5432/app.", []string{"DATABASE_URL=pos…pp"}},
		{"two, in the file's order", "postgres://admin:S3cr3tP4ss@db.internal:5432/app and sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3", "DATABASE_URL=pos…pp"}},
		{"a whole ordinary line", "It sets NODE_ENV=production.", []string{"NODE_ENV=…"}},
		{"absent", "The project reads its API key from the environment.", nil},
		{"an ordinary word of a value", "Deploy to production on port 5432.", nil},
		{"a near miss", "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f4", nil},
		{"a comment too short", "# production", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, quoted(p.find(tt.payload))); diff != "" {
			t.Errorf("%s: find(%q) (-want +got):\n%s", tt.name, tt.payload, diff)
		}
	}
	if got := p.find("nothing", "", "also API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"); len(got) != 1 {
		t.Errorf("find over several payloads = %v, want the one line", got)
	}
}

// Reading the same lines again remembers them once.
func TestPrivateLines_once(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	n, f := len(p.lines), len(p.frags)
	p.add(envFile, 1)
	p.add("  API_KEY = sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n", 1)
	if len(p.lines) != n || len(p.frags) != f {
		t.Errorf("after re-reading: %d lines, %d fragments; want %d, %d", len(p.lines), len(p.frags), n, f)
	}
}

// Past its bound it stops remembering and says so.
func TestPrivateLines_bounded(t *testing.T) {
	var p privateLines
	var b strings.Builder
	for i := range maxPrivateLines + 10 {
		fmt.Fprintf(&b, "KEY_%d=value-%08d\n", i, i)
	}
	p.add(b.String(), 0)
	if !p.full || len(p.lines) > maxPrivateLines || len(p.frags) > maxFragments {
		t.Errorf("full=%v, %d lines, %d fragments; want full, at most %d, %d", p.full, len(p.lines), len(p.frags), maxPrivateLines, maxFragments)
	}
	if got := p.find("KEY_7=value-00000007"); len(got) != 1 {
		t.Errorf("a line remembered before the bound is not found: %v", got)
	}
}

// redact masks each private fragment where it stands, whole line or value
// alone, wrapped or not, and leaves the rest as it was.
func TestPrivateLines_redact(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	tests := []struct{ in, want string }{
		{`curl -H "Authorization: Bearer sk-proj-4fGh82kLmN0pQrStUvWxYz12f3" https://api.example.com`, `curl -H "Authorization: Bearer sk-…f3" https://api.example.com`},
		{"echo API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3 > out", "echo API_KEY=sk-…f3 > out"},
		{"key: sk-proj-4fGh82kLm\n  N0pQrStUvWxYz12f3.", "key: sk-…f3."},
		{"psql postgres://admin:S3cr3tP4ss@db.internal:5432/app -c 'select 1' sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "psql postgres://a…pp -c 'select 1' sk-…f3"},
		{"nothing private here", "nothing private here"},
	}
	for _, tt := range tests {
		if got := p.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
