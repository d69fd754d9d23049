module github.com/coda-acp/coda/validators/testdata/yamlbench

go 1.26.5

require (
	github.com/goccy/go-yaml v1.19.2
	go.yaml.in/yaml/v3 v3.0.6
	gopkg.in/yaml.v3 v3.0.1
)
