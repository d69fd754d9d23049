package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/validators"
)

// TestAgentJSON checks the ACP Registry manifest at the repository's root
// against the registry's schema (kept in testdata), and against what the
// release script builds: the version coda reports, and one archive for
// each of the six targets, named as scripts/release.sh names them.
func TestAgentJSON(t *testing.T) {
	manifest, err := os.ReadFile("../../agent.json")
	if err != nil {
		t.Fatal(err)
	}
	schemaText, err := os.ReadFile("../../testdata/registry/agent.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := validators.CompileSchema(schemaText)
	if err != nil {
		t.Fatalf("the registry's schema: %v", err)
	}
	var doc any
	if err := json.Unmarshal(manifest, &doc); err != nil {
		t.Fatalf("agent.json is not JSON: %v", err)
	}
	if vs := schema.Validate(doc); len(vs) > 0 {
		t.Fatalf("agent.json breaks the registry's schema:\n%s", validators.FormatViolations(vs, 20))
	}

	var m struct {
		ID           string `json:"id"`
		Version      string `json:"version"`
		Distribution struct {
			Binary map[string]struct {
				Archive string `json:"archive"`
				Cmd     string `json:"cmd"`
			} `json:"binary"`
		} `json:"distribution"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != version {
		t.Errorf("agent.json version %q, but coda reports %q: release one version", m.Version, version)
	}
	targets := []string{"darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"}
	var got []string
	for target := range m.Distribution.Binary {
		got = append(got, target)
	}
	slices.Sort(got)
	if !slices.Equal(got, targets) {
		t.Errorf("binary targets %v, want %v", got, targets)
	}
	for target, b := range m.Distribution.Binary {
		ext, cmd := ".tar.gz", "./coda"
		if strings.HasPrefix(target, "windows-") {
			ext, cmd = ".zip", "./coda.exe"
		}
		wantArchive := "/v" + m.Version + "/coda-" + m.Version + "-" + target + ext
		if !strings.HasPrefix(b.Archive, "https://") || !strings.HasSuffix(b.Archive, wantArchive) {
			t.Errorf("%s: archive %q, want an https URL ending in %q", target, b.Archive, wantArchive)
		}
		if b.Cmd != cmd {
			t.Errorf("%s: cmd %q, want %q", target, b.Cmd, cmd)
		}
	}
}
