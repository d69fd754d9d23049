package blueprint

import "testing"

// A turn waits for MCP servers only for an agent that offers their tools.
func TestBlueprint_OffersMCP(t *testing.T) {
	for toml, want := range map[string]bool{
		"[stages.a]\navailable_tools = [\"read_file\"]":               false,
		"[stages.a]\n[stages.b]\navailable_tools = [\"mcp:git/log\"]": true,
	} {
		b, err := Parse([]byte(toml), "t.toml")
		if err != nil {
			t.Fatal(err)
		}
		if got := b.OffersMCP(); got != want {
			t.Errorf("OffersMCP(%q) = %v", toml, got)
		}
	}
}
