//go:build !unix

package namedfile

const openFlags = 0
