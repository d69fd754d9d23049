package pickers

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The list is asked once however often Start is called, Await gives up
// after its bound, and Stop ends an ask still running.
func TestListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		asked := 0
		l := NewListing(func(ctx context.Context) []Listed {
			asked++
			select {
			case <-release:
				return []Listed{{Spec: "lab:m", Name: "lab:m"}}
			case <-ctx.Done():
				return nil
			}
		})
		arrived := make(chan int, 2)
		l.Start(func(m []Listed) { arrived <- len(m) })
		l.Start(func(m []Listed) { arrived <- -1 })
		if l.Await(context.Background(), time.Second) {
			t.Error("Await answered before the list came")
		}
		if _, ok := l.Listed(); ok {
			t.Error("Listed before the list came")
		}
		close(release)
		if !l.Await(context.Background(), time.Second) {
			t.Error("Await timed out with the list in")
		}
		if n := <-arrived; n != 1 {
			t.Errorf("arrived with %d models", n)
		}
		if m, ok := l.Listed(); !ok || len(m) != 1 || asked != 1 {
			t.Errorf("Listed = %v, %v after %d asks", m, ok, asked)
		}
		l.Stop()
	})
	// A listing of nothing is off, and Start does nothing.
	if l := NewListing(nil); l.On() {
		t.Error("a nil discover is on")
	}
}
