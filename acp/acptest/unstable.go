package acptest

import (
	"encoding/json"
	"fmt"

	"github.com/kaptinlin/jsonschema"
)

// unstableToo are the responses whose results are also checked against
// the unstable schema's definition: the stable one lets through what
// only the unstable one defines (PromptResponse.usage), unchecked.
var unstableToo = map[string]bool{
	"session/prompt": true,
}

// CheckUnstableResult reports why result is not valid against the
// unstable schema's definition of method's result.
func CheckUnstableResult(method string, result []byte) error {
	d := ResultDef(method)
	if d == "" {
		return fmt.Errorf("acptest knows no result definition for %s", method)
	}
	var v any
	if err := json.Unmarshal(result, &v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return validateUnstable(d, v)
}

// validateUnstable validates v against the unstable schema's definition
// name.
func validateUnstable(name string, v any) error {
	sch, err := unstableDef(name)
	if err != nil {
		return err
	}
	if res := sch.Validate(v); !res.IsValid() {
		b, _ := json.Marshal(res.Errors)
		return fmt.Errorf("invalid %s (unstable schema): %s", name, b)
	}
	return nil
}

func unstableDef(name string) (*jsonschema.Schema, error) {
	if _, err := def(name); err != nil { // loads both schemas
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	key := "unstable:" + name
	if sch := compiled[key]; sch != nil {
		return sch, nil
	}
	defs, _ := unstableDefs["$defs"].(map[string]any)
	if defs[name] == nil {
		return nil, fmt.Errorf("the ACP unstable schema has no definition %s", name)
	}
	b, _ := json.Marshal(map[string]any{"$defs": defs, "$ref": "#/$defs/" + name})
	sch, err := jsonschema.NewCompiler().Compile(b)
	if err != nil {
		return nil, fmt.Errorf("compiling the ACP unstable schema's %q: %w", name, err)
	}
	compiled[key] = sch
	return sch, nil
}
