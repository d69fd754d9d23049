//go:build !linux

package addrspace

// Restore does nothing: only Linux is handled (elsewhere ulimit -v is not
// enforced, or starlark reserves nothing).
func Restore() {}
