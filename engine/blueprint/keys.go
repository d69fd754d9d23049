package blueprint

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/outputspec"
)

// The keys a blueprint's tables may hold: what an unknown key is told it
// may have meant, and which keys are free-form.

// suggest names the known key closest to an unknown one, or "".
func suggest(k toml.Key) string {
	if len(k) == 0 {
		return ""
	}
	parent, last := k[:len(k)-1], k[len(k)-1]
	best, bestD := "", 3
	for _, cand := range knownKeys(parent) {
		if d := editDistance(last, cand); d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" {
		return ""
	}
	return strings.Join(append(append([]string(nil), parent...), best), ".")
}

// knownKeys lists the keys the table at parent may hold.
func knownKeys(parent []string) []string {
	var t reflect.Type
	switch {
	case len(parent) == 0:
		t = reflect.TypeOf(Blueprint{})
	case len(parent) == 1 && parent[0] == "agent":
		t = reflect.TypeOf(AgentConfig{})
	case len(parent) == 2 && parent[0] == "agent" && parent[1] == "taint":
		t = reflect.TypeOf(TaintConfig{})
	case len(parent) == 3 && parent[0] == "agent" && parent[1] == "commands":
		t = reflect.TypeOf(SlashCommand{})
	case len(parent) == 2 && parent[0] == "agent" && parent[1] == "output",
		len(parent) == 3 && parent[0] == "stages" && parent[2] == "output":
		t = reflect.TypeOf(outputspec.Spec{})
	case len(parent) >= 3 && parent[len(parent)-1] == "artifacts" && parent[len(parent)-2] == "output":
		t = reflect.TypeOf(outputspec.ArtifactDecl{})
	case len(parent) == 2 && parent[0] == "stages":
		t = reflect.TypeOf(Stage{})
	case len(parent) == 3 && parent[0] == "stages" && parent[2] == "model":
		t = reflect.TypeOf(StageModel{})
	case len(parent) == 4 && parent[0] == "stages" && parent[2] == "transitions":
		t = reflect.TypeOf(Transition{})
	case len(parent) == 3 && parent[0] == "stages" && parent[2] == "fan_out":
		t = reflect.TypeOf(FanOut{})
	default:
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("toml"); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// inSchema reports whether k lies inside an inline output schema, which is
// free-form JSON Schema rather than blueprint keys.
func inSchema(k toml.Key) bool {
	for i := 0; i+1 < len(k); i++ {
		if k[i] == "output" && k[i+1] == "schema" && i+2 < len(k) {
			return true
		}
	}
	return false
}
