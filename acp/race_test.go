//go:build race

package acp

// raceEnabled: under the race detector, encoding/json runs some forty times
// slower, so tests that push hundreds of MiB through it measure memory only
// in the plain run (go test ./...).
const raceEnabled = true
