package main

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/coda-acp/coda/engine"
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
func loadAgent(nameOrPath string) (*engine.Blueprint, error) {
	if !strings.ContainsAny(nameOrPath, `/\.`) {
		data, err := bundled.ReadFile(path.Join("agents", nameOrPath, "blueprint.toml"))
		if err == nil {
			return engine.ParseBlueprint(data, "bundled agent "+nameOrPath)
		}
		if _, statErr := os.Stat(nameOrPath); statErr != nil {
			return nil, fmt.Errorf("no agent %q: the bundled agents are %s; or give a blueprint file or directory", nameOrPath, strings.Join(bundledNames(), ", "))
		}
	}
	return engine.LoadBlueprint(nameOrPath)
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
