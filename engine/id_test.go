package engine

import "testing"

func TestNewRunID(t *testing.T) {
	a, b := newRunID(), newRunID()
	if a == b || len(a) != len("20060102-150405-abcdef") {
		t.Errorf("newRunID = %q, %q", a, b)
	}
}
