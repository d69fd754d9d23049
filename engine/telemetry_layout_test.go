package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Telemetry that is off costs the turn nothing it links (DESIGN §23): the
// engine, acp and engine/mcp speak internal/telemetry, which imports no
// OpenTelemetry package; the SDK is internal/telemetry/otlp's, and only
// cmd/coda imports that.
func TestLayout_telemetry(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, pkg := range []string{".", "../acp", "./mcp", "../internal/telemetry"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "go.opentelemetry.io/") || strings.HasSuffix(dep, "/internal/telemetry/otlp") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
