package main

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
