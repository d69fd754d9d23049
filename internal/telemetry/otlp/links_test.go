package otlp_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// coda links no gRPC, telemetry on or off: its exporter speaks OTLP/HTTP
// with the OTLP message packages alone (exporter.go), because the SDK's
// otlptracehttp, through the OTLP collector package, linked gRPC and
// grpc-gateway, half again the binary, whose package init ran at every
// start. The go command lists what the binary links, from the module
// cache only.
func TestLinks_noGRPC(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/coda-acp/coda/cmd/coda")
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 100 || !slices.Contains(pkgs, "github.com/coda-acp/coda/internal/telemetry/otlp") {
		t.Fatalf("go list gave %d packages, without the exporter: not coda's?", len(pkgs))
	}
	for _, p := range pkgs {
		for _, heavy := range []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/", "go.opentelemetry.io/proto/otlp/collector/", "go.opentelemetry.io/otel/exporters/"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("cmd/coda links %s", p)
			}
		}
	}
}
