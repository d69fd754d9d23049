package validators

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkDecode_sameData decodes the same 256 KiB of data written as
// YAML and as JSON, as a schema check receives it (Decode applies Check's
// rules), and through goccy/go-yaml alone: the YAML side of issue 14's
// yaml/json target without the schema, whose cost both share.
func BenchmarkDecode_sameData(b *testing.B) {
	doc := bigYAML(answerCap)
	data, err := Decode("yaml", doc)
	if err != nil {
		b.Fatal(err)
	}
	js, err := json.Marshal(data)
	if err != nil {
		b.Fatal(err)
	}
	if _, ok := fastYAML(doc); !ok {
		b.Fatal("the fast path leaves the benchmark's document to goccy")
	}
	for _, c := range []struct {
		name, content string
		decode        func(string) (any, error)
	}{
		{"json", string(js), func(s string) (any, error) { return Decode("json", s) }},
		{"yaml", doc, func(s string) (any, error) { return Decode("yaml", s) }},
		{"yaml-goccy", doc, decodeYAMLGoccy},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.content)))
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := c.decode(c.content); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkFastYAML is the fast path's reason to be: a plain YAML answer
// decoded by it and by goccy/go-yaml, in one run, at sizes an answer has
// (4 KiB, 32 KiB and the 256 KiB cap). checkYAML decodes every YAML
// answer, schema or not, so this is what each one costs its check.
func BenchmarkFastYAML(b *testing.B) {
	for _, size := range []int{4 << 10, 32 << 10, answerCap} {
		doc := bigYAML(size)
		if _, ok := fastYAML(doc); !ok {
			b.Fatal("the fast path leaves the benchmark's document to goccy")
		}
		for _, c := range []struct {
			name   string
			decode func(string) (any, error)
		}{
			{"fast", decodeYAML},
			{"goccy", decodeYAMLGoccy},
		} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.decode(doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
