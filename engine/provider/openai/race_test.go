//go:build race

package openai

// raceEnabled: the race detector multiplies memory, so peaks are not measured.
const raceEnabled = true
