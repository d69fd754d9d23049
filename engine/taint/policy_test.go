package taint_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/taint"
)

// The launch's settings and the blueprint's combine key by key: --taint,
// then [agent.taint], then config.toml's [taint], then the defaults.
func TestLaunch_Resolve(t *testing.T) {
	config := &taint.Config{Policy: "deny", Private: []string{"*.secret"}}
	tests := []struct {
		name   string
		launch taint.Launch
		agent  *taint.Config
		want   taint.Config
	}{
		{"nothing set", taint.Launch{}, nil, taint.Config{Policy: "off", Private: taint.DefaultPrivate}},
		{"config", taint.Launch{Config: config}, nil, *config},
		{"blueprint cannot loosen config", taint.Launch{Config: config}, &taint.Config{Policy: "allow"}, *config},
		{"blueprint tightens config", taint.Launch{Config: &taint.Config{Policy: "allow"}}, &taint.Config{Policy: "ask"}, taint.Config{Policy: "ask", Private: taint.DefaultPrivate}},
		{"blueprint alone", taint.Launch{}, &taint.Config{Policy: "ask"}, taint.Config{Policy: "ask", Private: taint.DefaultPrivate}},
		{"blueprint's private adds", taint.Launch{Config: config}, &taint.Config{Private: []string{"*.pem", "*.secret"}}, taint.Config{Policy: "deny", Private: []string{"*.secret", "*.pem"}}},
		{"blueprint's private keeps the defaults", taint.Launch{}, &taint.Config{Policy: "deny", Private: []string{"data/**"}}, taint.Config{Policy: "deny", Private: append(append([]string(nil), taint.DefaultPrivate...), "data/**")}},
		{"flag over both", taint.Launch{Config: config, Policy: "allow"}, &taint.Config{Policy: "ask"}, taint.Config{Policy: "allow", Private: []string{"*.secret"}}},
		{"flag off", taint.Launch{Config: config, Policy: "off"}, &taint.Config{Policy: "ask"}, taint.Config{Policy: "off", Private: []string{"*.secret"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.launch.Resolve(tt.agent)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
