// Package scripts holds the test of release.sh; its subdirectories are the
// project's other scripts (bench, fuzz, interop).
package scripts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRelease_reproducible runs scripts/release.sh twice for linux-x86_64,
// into different directories with different temporary directories (once
// with TARGETS=, once with the target as an argument), and holds the two
// runs to the same bytes: the archive and SHA256SUMS. It then reads the
// archive as a user's tar would, and the npm packages the run wrote. It
// needs bash, GNU tar and gzip, and is skipped without them.
func TestRelease_reproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds coda twice; skipped with -short")
	}
	for _, tool := range []string{"bash", "gzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("release.sh needs %s, not found: %v", tool, err)
		}
	}
	if out, err := exec.Command("tar", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU tar")) {
		if out, err := exec.Command("gtar", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU tar")) {
			t.Skip("release.sh needs GNU tar (tar or gtar), not found")
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	version := manifestVersion(t, filepath.Join(root, "agent.json"))
	// The commit's time when this is a git checkout (what release.sh takes
	// by itself), else a fixed one: either way both runs get the same.
	epoch := "1700000000"
	if out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%ct").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		epoch = string(bytes.TrimSpace(out))
	}

	tmp := t.TempDir()
	release := func(name string, env []string, args ...string) string {
		dist := filepath.Join(tmp, name, "dist")
		scratch := filepath.Join(tmp, name, "tmp")
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "release.sh")}, args...)...)
		cmd.Env = append(os.Environ(), "DIST="+dist, "TMPDIR="+scratch, "SOURCE_DATE_EPOCH="+epoch, "TARGETS=")
		cmd.Env = append(cmd.Env, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release.sh %s: %v\n%s", name, err, out)
		}
		return dist
	}
	a := release("a", []string{"TARGETS=linux-x86_64"})
	b := release("b", nil, "linux-x86_64")

	archive := "coda-" + version + "-linux-x86_64.tar.gz"
	for _, name := range []string{archive, "SHA256SUMS"} {
		first, second := readFile(t, filepath.Join(a, name)), readFile(t, filepath.Join(b, name))
		if !bytes.Equal(first, second) {
			t.Errorf("%s differs between two runs on one commit (%d and %d bytes)", name, len(first), len(second))
		}
	}
	sums := string(readFile(t, filepath.Join(a, "SHA256SUMS")))
	if lines := strings.Split(strings.TrimSuffix(sums, "\n"), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], "  "+archive) {
		t.Errorf("SHA256SUMS = %q, want one line for %s", sums, archive)
	}

	// The archive as a user unpacks it.
	gz := readFile(t, filepath.Join(a, archive))
	if len(gz) < 10 || gz[3]&0x08 != 0 || !bytes.Equal(gz[4:8], []byte{0, 0, 0, 0}) {
		t.Errorf("the gzip header carries a name or a time (gzip -n leaves both out): % x", gz[:min(10, len(gz))])
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	wantEpoch, _ := strconv.ParseInt(epoch, 10, 64)
	contents := map[string][]byte{}
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		contents[h.Name] = body
		wantMode := int64(0o644)
		if h.Name == "coda" {
			wantMode = 0o755
		}
		if h.Typeflag != tar.TypeReg || h.Mode != wantMode || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != wantEpoch {
			t.Errorf("%s: type %c mode %o owner %d:%d (%q:%q) time %d, want a file of mode %o owned by 0:0 with no names, at the commit's time %d",
				h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), wantMode, wantEpoch)
		}
	}
	if want := []string{"LICENSE", "README.md", "THIRD_PARTY_LICENSES", "coda"}; !slices.Equal(names, want) {
		t.Errorf("archive entries %q, want %q in this order", names, want)
	}
	if !bytes.Equal(contents["README.md"], readFile(t, filepath.Join(root, "docs", "README-binary.md"))) {
		t.Error("the archive's README.md is not docs/README-binary.md, the binary users' README")
	}
	if !bytes.Equal(contents["LICENSE"], readFile(t, filepath.Join(root, "LICENSE"))) {
		t.Error("the archive's LICENSE is not the repository's")
	}
	for _, mod := range []string{"github.com/kaptinlin/jsonschema", "go.starlark.net", "golang.org/x/sys", "(standard library and runtime)"} {
		if !bytes.Contains(contents["THIRD_PARTY_LICENSES"], []byte(mod)) {
			t.Errorf("THIRD_PARTY_LICENSES has no licence for %s", mod)
		}
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		bin := filepath.Join(tmp, "coda")
		if err := os.WriteFile(bin, contents["coda"], 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.Contains(string(out), version) {
			t.Errorf("the archive's coda version: %q, %v; want it to report %s", out, err, version)
		}
	}

	// The npm packages: the platform's, holding the same binary, and the
	// launcher, at the same version, naming all six platforms.
	var platform struct {
		Name, Version string
		OS            []string `json:"os"`
		CPU           []string `json:"cpu"`
		Files         []string `json:"files"`
	}
	readJSON(t, filepath.Join(a, "npm", "coda-linux-x64", "package.json"), &platform)
	if platform.Name != "@coda-acp/coda-linux-x64" || platform.Version != version ||
		!slices.Equal(platform.OS, []string{"linux"}) || !slices.Equal(platform.CPU, []string{"x64"}) {
		t.Errorf("platform package %+v, want @coda-acp/coda-linux-x64 %s for os linux, cpu x64", platform, version)
	}
	if !bytes.Equal(readFile(t, filepath.Join(a, "npm", "coda-linux-x64", "bin", "coda")), contents["coda"]) {
		t.Error("the npm platform package's bin/coda is not the archive's coda")
	}
	if fi, err := os.Stat(filepath.Join(a, "npm", "coda-linux-x64", "bin", "coda")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/coda: %v, %v; want mode 0755", fi, err)
	}
	var launcher struct {
		Name, Version        string
		Bin                  map[string]string `json:"bin"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
	}
	readJSON(t, filepath.Join(a, "npm", "coda-acp", "package.json"), &launcher)
	if launcher.Name != "coda-acp" || launcher.Version != version || launcher.Bin["coda"] != "bin/coda.js" {
		t.Errorf("launcher package %s %s bin %v, want coda-acp %s with bin coda: bin/coda.js", launcher.Name, launcher.Version, launcher.Bin, version)
	}
	for _, p := range []string{"darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-arm64", "win32-x64"} {
		if got := launcher.OptionalDependencies["@coda-acp/coda-"+p]; got != version {
			t.Errorf("the launcher's optional dependency on @coda-acp/coda-%s is %q, want %s", p, got, version)
		}
	}
	if len(launcher.OptionalDependencies) != 6 {
		t.Errorf("the launcher has %d optional dependencies, want the six platforms: %v", len(launcher.OptionalDependencies), launcher.OptionalDependencies)
	}
	if !bytes.Equal(readFile(t, filepath.Join(a, "npm", "coda-acp", "bin", "coda.js")), readFile(t, filepath.Join(root, "scripts", "npm", "coda.js"))) {
		t.Error("the launcher package's bin/coda.js is not scripts/npm/coda.js")
	}
	for _, pkg := range []string{"coda-acp", "coda-linux-x64"} {
		if !bytes.Equal(readFile(t, filepath.Join(a, "npm", pkg, "README.md")), contents["README.md"]) {
			t.Errorf("npm package %s's README.md is not the binary users' README", pkg)
		}
	}
}

func manifestVersion(t *testing.T, path string) string {
	t.Helper()
	var m struct{ Version string }
	readJSON(t, path, &m)
	if m.Version == "" {
		t.Fatalf("%s has no version", path)
	}
	return m.Version
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal(readFile(t, path), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
