package blueprint

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// A stage's models as Leviath writes them (DESIGN §25): each entry of
// `models` is a string ("anthropic:claude-sonnet-5", a bare
// "claude-sonnet-5", OpenRouter's "vendor/model") or a table with provider
// and model, inline or as [[stages.X.model.models]]; the two may mix.
// Which provider serves a bare id is cmd/coda's to say (its catalog and
// config), not the blueprint's.

// Parameters the engine sends under each API's own name
// (engine/provider's Params); any other key goes to the API as written.
const (
	ParamTemperature     = "temperature"
	ParamTopP            = "top_p"
	ParamTopK            = "top_k"
	ParamMaxOutputTokens = "max_output_tokens"
	ParamSeed            = "seed"
	ParamStop            = "stop"
)

// modelEntryKeys are the keys a model entry's table takes, as Leviath's
// ModelEntry has them.
var modelEntryKeys = []string{"provider", "model"}

// checkModel reads the stage's model entries into Model.Models and checks
// its parameters and timeout, one finding per problem, each naming its
// key.
func checkModel(fs *findings, s *Stage) {
	key := "stages." + s.Name + ".model"
	s.Model.Models = s.Model.Models[:0]
	for i, e := range s.Model.Entries {
		at := fmt.Sprintf("%s.models[%d]", key, i)
		spec, why := modelEntry(e)
		if why != "" {
			fs.add(SeverityError, CodeBadValue, at, "%s", why)
			continue
		}
		s.Model.Models = append(s.Model.Models, spec)
	}
	if s.Model.RequestTimeoutSecs < 0 {
		fs.add(SeverityError, CodeBadValue, key+".request_timeout_secs", "%d: give a positive number of seconds, or leave it out for the provider's limit", s.Model.RequestTimeoutSecs)
	}
	for name, v := range s.Model.Parameters {
		if why := checkParam(name, v); why != "" {
			fs.add(SeverityError, CodeBadValue, key+".parameters."+name, "%s", why)
		}
	}
}

// modelEntry is the spec one entry of `models` names, or why it names
// none.
func modelEntry(e any) (spec, why string) {
	switch e := e.(type) {
	case string:
		spec = strings.TrimSpace(e)
		if spec == "" {
			return "", "an empty model name: write PROVIDER:MODEL, a model id such as claude-sonnet-5, or { provider = \"...\", model = \"...\" }"
		}
		return spec, ""
	case map[string]any:
		for k := range e {
			if k != "provider" && k != "model" {
				return "", fmt.Sprintf("unknown key %s: a model entry takes %s", k, strings.Join(modelEntryKeys, " and "))
			}
		}
		model, ok := e["model"].(string)
		if model = strings.TrimSpace(model); !ok || model == "" {
			return "", "a model entry needs model = \"...\" (the id its provider knows it by)"
		}
		p, has := e["provider"]
		if !has {
			// Leviath's open route: the provider that serves the id.
			return model, ""
		}
		provider, ok := p.(string)
		if provider = strings.TrimSpace(provider); !ok || provider == "" || strings.ContainsAny(provider, ": ") {
			return "", fmt.Sprintf("provider = %v: want a provider's name, such as \"anthropic\" or a [providers.NAME] of the config", p)
		}
		return provider + ":" + model, ""
	}
	return "", fmt.Sprintf("%v is neither a model name nor a { provider, model } table", e)
}

// checkParam says what is wrong with a parameter coda maps, or "".
func checkParam(name string, v any) string {
	switch name {
	case ParamTemperature, ParamTopP:
		switch v.(type) {
		case int64, float64:
			return ""
		}
		return fmt.Sprintf("%v: want a number", v)
	case ParamMaxOutputTokens, ParamSeed, ParamTopK:
		if n, ok := v.(int64); !ok || n < 0 || name == ParamMaxOutputTokens && n == 0 {
			return fmt.Sprintf("%v: want a positive whole number", v)
		}
	case ParamStop:
		switch v := v.(type) {
		case string:
			return ""
		case []any:
			for _, s := range v {
				if _, ok := s.(string); !ok {
					return "want a string or a list of strings"
				}
			}
			return ""
		}
		return "want a string or a list of strings"
	}
	return ""
}

// inModel reports whether k lies inside a model entry's table (read and
// checked by checkModel) or inside a parameter's value (free-form: the
// provider's API says what it takes).
func inModel(k toml.Key) bool {
	if len(k) < 5 || k[0] != "stages" || k[2] != "model" {
		return false
	}
	return k[3] == "models" || k[3] == "parameters" && len(k) >= 6
}
