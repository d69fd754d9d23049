// Package addrspace keeps go.starlark.net from reserving 4 GiB of address
// space when coda runs under an address-space limit (ulimit -v).
//
// go.starlark.net/starlark reserves 4 GiB at its start (int_posix64.go: a
// mapping whose addresses stand for small ints, so that they need not
// allocate), and falls back to allocating them when the mapping fails. A
// host whose limit leaves room for the reservation but little beside it
// (ulimit -v near 6 GB) then sees coda die of "out of memory" with a few MB
// in use. So when a limit is set, this package's init lowers it for the
// moment starlark starts, so that the reservation fails and starlark takes
// its fallback, and package starlarkint's init, which runs right after
// starlark's, puts the limit back: coda then needs the address space of
// its Go runtime alone (about 1.7 GiB), and a limit of 2 GiB is enough.
// Without a limit nothing changes, and starlark keeps its fast ints.
//
// The order is Go's: packages initialise after what they import, and
// among those ready, in the order of their import paths, so this package
// (github.com/…), which imports only what starlark's own imports start,
// goes before go.starlark.net/starlark; package starlarkint imports both
// and goes right after. validators imports starlarkint.
package addrspace
