package validators

import (
	"bytes"
	"embed"
	"io"
	"strings"
)

// The draft metaschemas, as json-schema-org/json-schema-spec publishes them
// (metaschemas/SOURCE.md), so that a $ref to one resolves with no network:
// 2020-12 and 2019-09 with their vocabularies, draft-07, draft-06 and
// draft-04.
//
//go:embed metaschemas
var metaschemaFiles embed.FS

// metaschemas maps each metaschema's address, without scheme or fragment
// ("json-schema.org/draft/2020-12/meta/core"), to its file.
var metaschemas = map[string]string{
	"json-schema.org/draft/2020-12/schema":                 "metaschemas/2020-12/schema.json",
	"json-schema.org/draft/2020-12/meta/core":              "metaschemas/2020-12/meta/core.json",
	"json-schema.org/draft/2020-12/meta/applicator":        "metaschemas/2020-12/meta/applicator.json",
	"json-schema.org/draft/2020-12/meta/unevaluated":       "metaschemas/2020-12/meta/unevaluated.json",
	"json-schema.org/draft/2020-12/meta/validation":        "metaschemas/2020-12/meta/validation.json",
	"json-schema.org/draft/2020-12/meta/meta-data":         "metaschemas/2020-12/meta/meta-data.json",
	"json-schema.org/draft/2020-12/meta/format-annotation": "metaschemas/2020-12/meta/format-annotation.json",
	"json-schema.org/draft/2020-12/meta/format-assertion":  "metaschemas/2020-12/meta/format-assertion.json",
	"json-schema.org/draft/2020-12/meta/content":           "metaschemas/2020-12/meta/content.json",
	"json-schema.org/draft/2019-09/schema":                 "metaschemas/2019-09/schema.json",
	"json-schema.org/draft/2019-09/meta/core":              "metaschemas/2019-09/meta/core.json",
	"json-schema.org/draft/2019-09/meta/applicator":        "metaschemas/2019-09/meta/applicator.json",
	"json-schema.org/draft/2019-09/meta/validation":        "metaschemas/2019-09/meta/validation.json",
	"json-schema.org/draft/2019-09/meta/meta-data":         "metaschemas/2019-09/meta/meta-data.json",
	"json-schema.org/draft/2019-09/meta/format":            "metaschemas/2019-09/meta/format.json",
	"json-schema.org/draft/2019-09/meta/content":           "metaschemas/2019-09/meta/content.json",
	"json-schema.org/draft-07/schema":                      "metaschemas/draft-07/schema.json",
	"json-schema.org/draft-06/schema":                      "metaschemas/draft-06/schema.json",
	"json-schema.org/draft-04/schema":                      "metaschemas/draft-04/schema.json",
}

// loadMetaschema is the loader for http and https addresses: a bundled
// metaschema loads from the binary, anything else is refused (coda never
// fetches a schema).
func loadMetaschema(url string) (io.ReadCloser, error) {
	key, _, _ := strings.Cut(url, "#")
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	if name, ok := metaschemas[key]; ok {
		b, err := metaschemaFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return errNoNetwork(url)
}
