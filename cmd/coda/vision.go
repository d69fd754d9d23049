package main

// modelConfig is a [providers.NAME.models."MODEL"] table: what is known of
// one model of the provider, over what the provider's table says.
type modelConfig struct {
	// Vision says whether the model can see images.
	Vision *bool `toml:"vision"`
}

// sees reports whether model, served by p, takes images: the model's own
// vision setting, else the provider's, else yes (a model that cannot is
// marked in the config file).
func (p *providerConfig) sees(model string) bool {
	if m, ok := p.Models[model]; ok && m.Vision != nil {
		return *m.Vision
	}
	if p.Vision != nil {
		return *p.Vision
	}
	return true
}
