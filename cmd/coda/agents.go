package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
)

// bundled holds the agents compiled into the binary.
//
//go:embed agents/*/blueprint.toml
var bundled embed.FS

// bundledNames lists the bundled agents, sorted.
func bundledNames() []string {
	entries, _ := fs.ReadDir(bundled, "agents")
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// loadAgent loads a bundled agent by name, or a blueprint file or directory.
func loadAgent(nameOrPath string) (*blueprint.Blueprint, error) {
	data, source, dir, err := readBlueprint(nameOrPath)
	if err != nil {
		return nil, err
	}
	b, err := blueprint.Parse(data, source)
	if err != nil {
		return nil, err
	}
	b.Dir = dir
	return b, nil
}

// loadSpawned loads an agent a stage's spawn list names (an
// blueprint.Loader): a bundled agent's name, or a blueprint path
// relative to the spawning blueprint's directory.
func loadSpawned(name, fromDir string) (*blueprint.Blueprint, error) {
	if fromDir != "" && strings.ContainsAny(name, `/\.`) && !filepath.IsAbs(name) {
		name = filepath.Join(fromDir, name)
	}
	return loadAgent(name)
}

// loadSpawned is the package's loadSpawned with the config's defaults for
// the agent's answers ([mime] overwrite_artifacts): the engine's loader of
// the agents a run spawns.
func (c *config) loadSpawned(name, fromDir string) (*blueprint.Blueprint, error) {
	b, err := loadSpawned(name, fromDir)
	if err == nil {
		b.OverwriteArtifacts = c.MIME.OverwriteArtifacts
	}
	return b, err
}

// agentsCmd lists the bundled agents, one line each.
func agentsCmd(args []string, stdout io.Writer) error {
	fs := newFlagSet("agents")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	for _, name := range bundledNames() {
		b, err := loadAgent(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-12s %s\n", name, b.Agent.Description)
	}
	return nil
}

// readBlueprint finds a blueprint's text the way loadAgent does: a bundled
// agent's name, a file, or a directory holding blueprint.toml. It returns
// the text, the name messages use, and the directory relative paths
// resolve in ("" for a bundled agent).
func readBlueprint(nameOrPath string) (data []byte, source, dir string, err error) {
	if !strings.ContainsAny(nameOrPath, `/\.`) {
		data, err := bundled.ReadFile(path.Join("agents", nameOrPath, "blueprint.toml"))
		if err == nil {
			return data, "bundled agent " + nameOrPath, "", nil
		}
		if _, statErr := os.Stat(nameOrPath); statErr != nil {
			return nil, "", "", fmt.Errorf("no agent %q: the bundled agents are %s; or give a blueprint file or directory", nameOrPath, strings.Join(bundledNames(), ", "))
		}
	}
	file := nameOrPath
	if info, err := os.Stat(file); err == nil && info.IsDir() {
		file = filepath.Join(file, "blueprint.toml")
	}
	data, err = os.ReadFile(file)
	if err != nil {
		return nil, "", "", fmt.Errorf("blueprint %s: %w", file, unwrapPathErr(err))
	}
	dir, err = filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, "", "", err
	}
	return data, file, dir, nil
}

// unwrapPathErr drops the "open PATH:" an *os.PathError repeats.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
