package main

import "testing"

// [picker] discover = false asks no provider.
func TestDiscover_off(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	for _, tt := range []struct {
		config string
		want   bool
	}{{"", true}, {"[picker]\ndiscover = false\n", false}, {"[picker]\ndiscover = true\n", true}} {
		f := launchFlags{agent: "default", config: writeConfig(t, tt.config), model: "script:" + writeConfig(t, ""), stateDir: t.TempDir()}
		l, err := f.prepare(discardWriter{}, true)
		if err != nil {
			t.Fatalf("config %q: %v", tt.config, err)
		}
		if got := l.Models.Discovers(); got != tt.want {
			t.Errorf("config %q: discovering = %v, want %v", tt.config, got, tt.want)
		}
		l.closeLog()
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
