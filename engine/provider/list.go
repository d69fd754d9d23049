package provider

import "context"

// ListPages reads a model listing a page at a time, the skeleton every
// provider's Lister shares: fetch reads the page after token ("" for the
// first) and returns its models (the vendor's filter applied) and the
// next page's token ("" at the last). It stops at the last page, after
// maxPages whatever the tokens say, at a token that repeats, or at
// MaxListed models. Each fetch has the call's deadlines (Options.Call).
func ListPages(ctx context.Context, maxPages int, fetch func(ctx context.Context, token string) ([]Listed, string, error)) ([]Listed, error) {
	var out []Listed
	token := ""
	for range maxPages {
		models, next, err := fetch(ctx, token)
		if err != nil {
			return nil, err
		}
		for _, m := range models {
			out = append(out, m)
			if len(out) == MaxListed {
				return out, nil
			}
		}
		if next == "" || next == token {
			break
		}
		token = next
	}
	return out, nil
}
