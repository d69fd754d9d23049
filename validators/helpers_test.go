package validators

// What only the tests use.

// CompileSchema compiles a JSON Schema (drafts 2020-12, 2019-09, 7, 6 and
// 4), with format asserted (SchemaOptions' zero value). Nothing is ever
// fetched: a $ref to a draft's metaschema resolves to the bundled copy, and
// a $ref to any other http or https address, like any other $ref that does
// not resolve inside the schema, is a compile error. The error is one
// line, fit for a start-up failure or a warning.
func CompileSchema(src []byte) (*Schema, error) {
	return CompileSchemaWith(src, SchemaOptions{})
}

// AssertedFormats lists the formats asserted by default, for the model's
// and the user's documentation.
func AssertedFormats() []string {
	return []string{"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
}

// Name is the file name the validator was compiled under.
func (v *Validator) Name() string { return v.name }
