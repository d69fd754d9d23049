// Package validators checks answers: the well-formedness of each built-in
// format (json, xml, csv, yaml, toml, markdown), JSON Schema, and Starlark
// validator scripts. It knows nothing of specs, models or ACP; outputspec
// decides which checks apply and words the result for the model.
package validators
