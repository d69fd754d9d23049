package lint

import "github.com/coda-acp/coda/engine/blueprint"

// CodeUnknownModel is a stage's model that no configured provider serves:
// a spec without its provider (`claude-sonnet-5`), or a provider the
// config does not name. Where none of the stage's models is served, `coda
// run` refuses to start, and so this is an error; a fallback that is not
// served, beside one that is, only a warning.
const CodeUnknownModel = "unknown-model"

// lintServed checks each of a stage's own models against served, which
// says why no configured provider serves a spec ("" when one does).
func lintServed(fs *findings, s *blueprint.Stage, served func(spec string) string) {
	if served == nil || len(s.Model.Models) == 0 {
		return
	}
	var whys []string
	for _, spec := range s.Model.Models {
		whys = append(whys, served(spec))
	}
	some := false
	for _, why := range whys {
		some = some || why == ""
	}
	key := "stages." + s.Name + ".model"
	for _, why := range whys {
		switch {
		case why == "":
		case some:
			fs.add(blueprint.SeverityWarning, CodeUnknownModel, key, "%s; the stage falls back to the next of its models", why)
		default:
			fs.add(blueprint.SeverityError, CodeUnknownModel, key, "%s", why)
		}
	}
}
