// Package starlarkint starts go.starlark.net/starlark under package
// addrspace's lowered address-space limit, and puts the limit back: see
// addrspace. Import it (validators does) wherever starlark is.
package starlarkint

import (
	"github.com/coda-acp/coda/internal/addrspace"

	_ "go.starlark.net/starlark"
)

func init() { addrspace.Restore() }
