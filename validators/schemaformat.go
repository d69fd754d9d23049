package validators

import (
	"github.com/kaptinlin/jsonschema"
)

// assertedFormats are the formats coda asserts unless a spec says
// assert_format = false (DESIGN §20): those the providers' strict modes
// enforce at the source, so that coda's check and the provider's agree.
// Every other format is an annotation, as the drafts have it.
var assertedFormats = map[string]func(any) bool{
	"date-time": jsonschema.IsDateTime,
	"date":      jsonschema.IsDate,
	"time":      jsonschema.IsTime,
	"duration":  jsonschema.IsDuration,
	"email":     jsonschema.IsEmail,
	"hostname":  isHostname,
	"ipv4":      isIPv4,
	"ipv6":      jsonschema.IsIPV6,
	"uuid":      jsonschema.IsUUID,
	"uri":       isURI,
}

func annotation(any) bool { return true }

// registerFormats tells the compiler, for every format the schema or a
// bundled metaschema may name, whether it is asserted. The compiler asserts
// what it is given (AssertFormat), so a format coda leaves an annotation
// is given as one that accepts everything, and an unknown format is never
// an error; coda's ECMA-262 patterns are always asserted.
func registerFormats(c *jsonschema.Compiler, p *preparedSchema, opts SchemaOptions) {
	c.SetAssertFormat(true)
	names := map[string]bool{}
	for n := range jsonschema.Formats {
		names[n] = true
	}
	for n := range p.formats {
		names[n] = true
	}
	for n := range p.patterns {
		names[n] = true
	}
	for n := range p.objects {
		names[n] = true
	}
	for n := range names {
		if v, ok := assertedFormats[n]; ok && !opts.NoFormatAssertion {
			c.RegisterFormat(n, v)
			continue
		}
		if re, ok := p.patterns[n]; ok {
			c.RegisterFormat(n, func(v any) bool {
				s, ok := v.(string)
				if !ok {
					return true
				}
				m, err := re.MatchString(s)
				return err == nil && m
			}, "string")
			continue
		}
		if o, ok := p.objects[n]; ok {
			c.RegisterFormat(n, o.check, "object")
			continue
		}
		c.RegisterFormat(n, annotation)
	}
}
