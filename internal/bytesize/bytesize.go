// Package bytesize shows a count of bytes as people read it, in messages
// to the user and the model.
package bytesize

import "fmt"

// Format shows a size: 512 bytes, 34 KB, 2.5 MB.
func Format(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
