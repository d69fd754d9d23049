package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaptinlin/jsonschema"
)

// TestAgentJSON checks the ACP Registry manifest at the repository's root
// against the registry's schema (kept in testdata) with its "format"
// keywords asserted, as the registry's CI (Python jsonschema) checks a
// URI; against the registry's icon rules; and against what the release
// script builds: the version coda reports, one archive for each of the six
// targets named as scripts/release.sh names them, and the npm package it
// writes.
func TestAgentJSON(t *testing.T) {
	manifest, err := os.ReadFile("../../agent.json")
	if err != nil {
		t.Fatal(err)
	}
	schema := registrySchema(t)
	var doc any
	if err := json.Unmarshal(manifest, &doc); err != nil {
		t.Fatalf("agent.json is not JSON: %v", err)
	}
	if err := validateManifest(schema, doc); err != nil {
		t.Fatalf("agent.json breaks the registry's schema:\n%v", err)
	}

	var m struct {
		ID           string `json:"id"`
		Version      string `json:"version"`
		License      string `json:"license"`
		Icon         string `json:"icon"`
		Distribution struct {
			Binary map[string]struct {
				Archive string `json:"archive"`
				Cmd     string `json:"cmd"`
			} `json:"binary"`
			Npx struct {
				Package string `json:"package"`
			} `json:"npx"`
		} `json:"distribution"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != version {
		t.Errorf("agent.json version %q, but coda reports %q: release one version", m.Version, version)
	}
	if m.License != "Apache-2.0" {
		t.Errorf("agent.json license %q, want the LICENSE file's Apache-2.0", m.License)
	}
	if license, err := os.ReadFile("../../LICENSE"); err != nil || !strings.Contains(string(license), "Apache License\n                           Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0 that agent.json names (%v)", err)
	}
	if want := "coda-acp@" + m.Version; m.Distribution.Npx.Package != want {
		t.Errorf("npx package %q, want %q: the main npm package scripts/release.sh writes, at the release's version", m.Distribution.Npx.Package, want)
	}
	// The registry serves an entry's icon.svg, beside its agent.json, from
	// its CDN and writes that URL into "icon"; here it names the file.
	if m.Icon != "./icon.svg" {
		t.Errorf("agent.json icon %q, want \"./icon.svg\"", m.Icon)
	}
	icon, err := os.ReadFile(filepath.Join("../..", m.Icon))
	if err != nil {
		t.Fatalf("the icon agent.json names: %v", err)
	}
	if err := checkRegistryIcon(icon); err != nil {
		t.Errorf("%s breaks the registry's icon rules: %v", m.Icon, err)
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

// registrySchema compiles the registry's agent.schema.json with "format"
// asserted (kaptinlin only annotates it by default) and no loader that
// could reach the network.
func registrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	text, err := os.ReadFile("../../testdata/registry/agent.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler().SetAssertFormat(true)
	for scheme := range c.Loaders {
		c.RegisterLoader(scheme, func(url string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("no network in tests (%s)", url)
		})
	}
	schema, err := c.Compile(text)
	if err != nil {
		t.Fatalf("the registry's schema: %v", err)
	}
	return schema
}

// validateManifest reports every way doc breaks schema, or nil.
func validateManifest(schema *jsonschema.Schema, doc any) error {
	r := schema.Validate(doc)
	if r.IsValid() {
		return nil
	}
	var lines []string
	for _, d := range r.ToList().Details {
		for kw, msg := range d.Errors {
			lines = append(lines, fmt.Sprintf("%s: %s: %s", d.InstanceLocation, kw, msg))
		}
	}
	for kw, msg := range r.ToList().Errors {
		lines = append(lines, fmt.Sprintf("/: %s: %s", kw, msg))
	}
	slices.Sort(lines)
	return errors.New(strings.Join(lines, "\n"))
}

// TestAgentJSON_formatAsserted shows the schema check can fail where only a
// format is broken: a repository that is no URI, an archive that is none.
func TestAgentJSON_formatAsserted(t *testing.T) {
	schema := registrySchema(t)
	manifest, err := os.ReadFile("../../agent.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(m map[string]any)
	}{
		{"repository", func(m map[string]any) { m["repository"] = "not a uri" }},
		{"archive", func(m map[string]any) {
			b := m["distribution"].(map[string]any)["binary"].(map[string]any)
			b["linux-x86_64"].(map[string]any)["archive"] = "coda linux.tar.gz"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(manifest, &doc); err != nil {
				t.Fatal(err)
			}
			tc.spoil(doc)
			if err := validateManifest(schema, doc); err == nil {
				t.Errorf("a broken %s passes the schema: format is not asserted", tc.name)
			}
		})
	}
}

// checkRegistryIcon applies the ACP Registry's icon rules (CONTRIBUTING.md,
// "Icon Validation"; its CI's build_registry.py): a 16x16 square, by the
// svg's width and height or, failing those, its viewBox; every fill and
// stroke, as an attribute or in a style, currentColor, none or inherit;
// currentColor used. It reads the SVG as XML, so it also refuses one
// that is not well formed, and holds every width/height/viewBox given to
// 16, not only the ones the registry reads first.
func checkRegistryIcon(svg []byte) error {
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	var problems []string
	root := true
	usesCurrentColor := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attrs := map[string]string{}
		for _, a := range el.Attr {
			attrs[a.Name.Local] = strings.TrimSpace(a.Value)
		}
		if root {
			root = false
			if el.Name.Local != "svg" {
				return fmt.Errorf("the root element is <%s>, not <svg>", el.Name.Local)
			}
			w, hasW := attrs["width"]
			h, hasH := attrs["height"]
			vb, hasVB := attrs["viewBox"]
			if !hasVB && !(hasW && hasH) {
				problems = append(problems, "no width and height, and no viewBox")
			}
			if hasW && w != "16" || hasH && h != "16" {
				problems = append(problems, fmt.Sprintf("width %q height %q, want 16 and 16", w, h))
			}
			if hasVB && strings.Join(strings.Fields(strings.ReplaceAll(vb, ",", " ")), " ") != "0 0 16 16" {
				problems = append(problems, fmt.Sprintf("viewBox %q, want \"0 0 16 16\"", vb))
			}
		}
		paints := map[string]string{}
		for _, name := range []string{"fill", "stroke", "color", "stop-color", "flood-color", "lighting-color"} {
			if v, ok := attrs[name]; ok {
				paints[name] = v
			}
		}
		for decl := range strings.SplitSeq(attrs["style"], ";") {
			name, v, ok := strings.Cut(decl, ":")
			if !ok {
				continue
			}
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "fill" || name == "stroke" || strings.HasSuffix(name, "color") {
				paints["style "+name] = strings.TrimSpace(v)
			}
		}
		for name, v := range paints {
			switch strings.ToLower(v) {
			case "currentcolor":
				usesCurrentColor = true
			case "none", "inherit":
			default:
				problems = append(problems, fmt.Sprintf("<%s> %s=%q: a hard-coded colour (only currentColor, none or inherit)", el.Name.Local, name, v))
			}
		}
	}
	if root {
		return errors.New("no <svg> element")
	}
	if !usesCurrentColor {
		problems = append(problems, "currentColor is never used (an unpainted shape is black, whatever the theme)")
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// TestCheckRegistryIcon holds the icon check to the registry's examples:
// the one CONTRIBUTING.md gives passes, each hard-coded colour or wrong
// size it names fails.
func TestCheckRegistryIcon(t *testing.T) {
	const ok = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path fill="currentColor" d="M0 0h16v16z"/></svg>`
	if err := checkRegistryIcon([]byte(ok)); err != nil {
		t.Errorf("the registry's own example: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(ok, `fill="currentColor"`, `fill="#FF0000"`, 1),
		strings.Replace(ok, `fill="currentColor"`, `fill="red"`, 1),
		strings.Replace(ok, `fill="currentColor"`, `stroke="currentColor" fill="rgb(0,0,0)"`, 1),
		strings.Replace(ok, `fill="currentColor"`, `style="fill: currentColor; stroke: #000"`, 1),
		strings.Replace(ok, `fill="currentColor"`, `fill="none"`, 1),
		strings.Replace(ok, `width="16" height="16"`, `width="24" height="24"`, 1),
		strings.Replace(ok, `width="16" height="16" viewBox="0 0 16 16"`, `viewBox="0 0 16 24"`, 1),
		strings.Replace(ok, `width="16" height="16" viewBox="0 0 16 16"`, ``, 1),
		strings.Replace(ok, `</svg>`, ``, 1),
	} {
		if err := checkRegistryIcon([]byte(bad)); err == nil {
			t.Errorf("passes, but breaks the registry's rules: %s", bad)
		}
	}
}
